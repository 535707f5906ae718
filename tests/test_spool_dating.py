"""An event retried from the spool is dated when it was captured, not when it got through."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.identity import Scope
from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import Item, queued
from ai_memory.hookclient.main import run
from ai_memory.hooks.brief import read_snapshot
from ai_memory.hooks.sessions import idle_sessions
from tests.conftest import ServerProcess, clean_env, free_port
from tests.hooks_support import hook_env, make_checkout

PARAMS = {"project": "p", "event": "user-prompt", "agent": "codex", "session_id": "s1"}


def rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    uri = f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        return conn.execute(sql).fetchall()


def moment(stamp: object) -> datetime:
    assert isinstance(stamp, str)
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def idle_ended(data_dir: Path) -> ServerProcess:
    """A server whose idle sweep ends a session a second after its last event, and one
    session (``PARAMS``) it has ended so, its page written."""
    settings = {"AI_MEMORY_HOOKS__IDLE_END_S": "1", "AI_MEMORY_HOOKS__SCHEDULER_INTERVAL_S": "0.2"}
    server = ServerProcess(data_dir, env=clean_env(**settings)).start()
    try:
        with server.client() as client:
            assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
            deadline = time.monotonic() + 30
            while rows(data_dir, "SELECT end_reason FROM sessions") != [("idle",)]:
                assert time.monotonic() < deadline, "the idle sweep never ended the session"
                time.sleep(0.1)
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
    except BaseException:
        server.stop()
        raise
    return server


def hook(env: dict[str, str], checkout: Path, prompt: str, event: str = "UserPromptSubmit") -> None:
    payload = {"session_id": "r-1", "cwd": str(checkout), "hook_event_name": event}
    if prompt:
        payload["prompt"] = prompt
    stdin = io.BytesIO(json.dumps(payload).encode())
    argv = ["--agent", "claude-code", "--event", event]
    assert run(argv, stdin=stdin, stdout=io.StringIO(), env=env) == 0


def test_events_spooled_while_the_server_was_down_keep_their_order_and_times(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    for i in range(3):
        hook(dead, checkout, f"queued {i}")
    captured = datetime.now(UTC)
    time.sleep(1.5)  # the outage: the next run delivers its own event first, then the spool
    hook(hook_env(server.data_dir, server.url), checkout, "live one")
    assert list((server.data_dir / "spool").glob("*.json")) == []

    stored = rows(server.data_dir, "SELECT body, created_at FROM observations ORDER BY id")
    assert [body for body, _ in stored] == ["live one", "queued 0", "queued 1", "queued 2"]
    live = moment(stored[0][1])
    times = [moment(at) for _, at in stored[1:]]
    assert times == sorted(times) and times[-1] <= captured + timedelta(seconds=1) < live
    # The start moves back to the first capture; the last event is the last one heard of.
    [(started, last)] = rows(server.data_dir, "SELECT started_at, last_event_at FROM sessions")
    assert moment(started) == times[0] and moment(last) >= live

    # The session page, what the next agent reads, tells them in the order they happened.
    hook(hook_env(server.data_dir, server.url), checkout, "", "SessionEnd")
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get("/api/v1/projects/default/acme-shop/pages/sessions/r-1.md")
    assert page.status_code == 200, page.text
    body = page.json()["body"]
    assert -1 < body.find("queued 0") < body.find("queued 2") < body.find("live one"), body


def test_queued_s_dates_an_event_back_and_a_session_with_a_backlog_is_not_idle(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "now"}).status_code == 202
        before_late = now_iso()
        late = {**PARAMS, "queued_s": "3600"}
        assert client.post("/hook", params=late, json={"prompt": "an hour ago"}).status_code == 202
        # A wait past 30 days is not believed (a clock wrong at capture): dated on arrival.
        wrong = {**PARAMS, "queued_s": "1234567890123.5"}
        assert client.post("/hook", params=wrong, json={"prompt": "1970"}).status_code == 202
    now = datetime.now(UTC)
    (_, first), (_, hour), (_, unbelieved) = rows(
        server.data_dir, "SELECT body, created_at FROM observations ORDER BY id"
    )
    assert now - timedelta(minutes=61) < moment(hour) < now - timedelta(minutes=59)
    assert moment(first) <= moment(unbelieved) <= now
    [(started, _)] = rows(server.data_dir, "SELECT started_at, last_event_at FROM sessions")
    assert started == hour

    # A session known only from its backlog: the idle sweep goes by when the server last
    # heard of it, not by the events' own times, so it is not taken for silent.
    backlog = {**PARAMS, "session_id": "s2"}
    with server.client() as client:
        for waited in ("7200", "3600"):
            params = {**backlog, "queued_s": waited}
            assert client.post("/hook", params=params, json={"prompt": waited}).status_code == 202
    [(started, last)] = rows(
        server.data_dir, "SELECT started_at, last_event_at FROM sessions WHERE session_id = 's2'"
    )
    assert moment(started) < now - timedelta(minutes=119)
    assert isinstance(last, str) and last >= before_late
    with closing(sqlite3.connect(server.data_dir / "db" / "memory.sqlite")) as conn:
        assert idle_sessions(conn, before_late) == []


def test_late_events_from_before_an_end_leave_the_session_ended_and_its_page_rewritten(
    server: ServerProcess,
) -> None:
    end = {**PARAMS, "event": "session-end"}
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "step one"}).status_code == 202
        assert client.post("/hook", params=end, json={"reason": "logout"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        late = {**PARAMS, "queued_s": "2"}
        answer = client.post("/hook", params=late, json={"prompt": "step zero, spooled"})
        assert answer.status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get("/api/v1/projects/default/p/pages/sessions/s1.md")
    [(ended_at, reason, page_id)] = rows(
        server.data_dir, "SELECT ended_at, end_reason, page_id FROM sessions"
    )
    assert ended_at is not None and reason == "logout" and page_id is not None
    assert page.status_code == 200 and page.json()["version"] == 2
    body = page.json()["body"]
    assert -1 < body.find("step zero, spooled") < body.find("step one"), body
    # Its handoff stands: a new one, dated now, would displace newer sessions' handoffs.
    assert rows(server.data_dir, "SELECT from_session, status FROM handoffs") == [("s1", "open")]


def test_a_late_end_of_a_session_that_went_on_ends_nothing(server: ServerProcess) -> None:
    with server.client() as client:
        for prompt in ("before", "after the end was captured"):
            answer = client.post("/hook", params=PARAMS, json={"prompt": prompt})
            assert answer.status_code == 202
        late_end = {**PARAMS, "event": "session-end", "queued_s": "60"}
        assert client.post("/hook", params=late_end, json={"reason": "exit"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    assert rows(server.data_dir, "SELECT ended_at, end_reason, page_id FROM sessions") == [
        (None, None, None)
    ]
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(0,)]


def test_a_wait_past_belief_never_reopens_an_ended_session(server: ServerProcess) -> None:
    end = {**PARAMS, "event": "session-end"}
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
        assert client.post("/hook", params=end, json={"reason": "logout"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        unbelieved = {**PARAMS, "queued_s": str(31 * 86400)}
        assert client.post("/hook", params=unbelieved, json={"prompt": "?"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    [(ended_at, reason)] = rows(server.data_dir, "SELECT ended_at, end_reason FROM sessions")
    assert ended_at is not None and reason == "logout"


def test_the_servers_own_drain_dates_what_it_delivers(data_dir: Path, tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "shop")
    server = ServerProcess(data_dir)
    dead = hook_env(data_dir, server.url)  # not started yet: every event is spooled
    hook(dead, checkout, "captured while down")
    captured = datetime.now(UTC)
    time.sleep(1.5)
    server.start()  # it delivers the spool itself as it starts
    try:
        with server.client() as client:
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
        assert list((data_dir / "spool").glob("*.json")) == []
        [(at,)] = rows(data_dir, "SELECT created_at FROM observations WHERE kind = 'user-prompt'")
        assert moment(at) <= captured + timedelta(seconds=1)
    finally:
        server.stop()


def test_the_recovery_packet_reads_a_session_in_the_order_it_happened(
    server: ServerProcess,
) -> None:
    steps = [("step 3: ship it", None), ("step 1: the goal", "120"), ("step 2: build", "60")]
    with server.client() as client:
        for prompt, waited in steps:
            params = {**PARAMS, **({"queued_s": waited} if waited else {})}
            assert client.post("/hook", params=params, json={"prompt": prompt}).status_code == 202
    uri = f"file:{server.data_dir / 'db' / 'memory.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        snapshot = read_snapshot(conn, Scope.of(None, "p"), "s1")
    assert snapshot is not None and snapshot["first_prompt"] == "step 1: the goal"
    assert snapshot["last_prompts"] == ["step 1: the goal", "step 2: build", "step 3: ship it"]


def test_a_malformed_queued_s_is_refused_and_stores_nothing(server: ServerProcess) -> None:
    with server.client() as client:
        for bad in ("-1", "abc", "1e5", "nan", "1.2.3", "12.", "0x10", "1_000", "9" * 16):
            answer = client.post("/hook", params={**PARAMS, "queued_s": bad}, json={"prompt": "x"})
            assert answer.status_code == 400 and "queued_s" in answer.text, (bad, answer.text)
        # Checked beside an occurred_at too (which wins when both are good).
        both = {**PARAMS, "queued_s": "soon", "occurred_at": "2024-05-01T10:00:00Z"}
        answer = client.post("/hook", params=both, json={"prompt": "x"})
        assert answer.status_code == 400 and "queued_s" in answer.text
        item = {"params": {**PARAMS, "queued_s": "soon"}, "body": {"prompt": "x"}}
        batch = client.post("/hook/batch", json=[item])
        assert batch.status_code == 200
        assert batch.json()["results"][0]["status"] == 400
    assert rows(server.data_dir, "SELECT count(*) FROM observations") == [(0,)]


def test_the_capture_time_is_read_back_from_the_key_alone() -> None:
    before = time.time_ns()
    key = spool.new_ingest_key()
    captured = spool.captured_ns(key)
    assert captured is not None and before <= captured <= time.time_ns()
    for other in ("abc", "0123456789abcdeg-x", "_123456789abcdef-x", "0123456789abcdef", ""):
        assert spool.captured_ns(other) is None
    old = f"{before - 90 * 10**9:016x}-00"
    assert queued({"event": "x"}, old, before) == {"event": "x", "queued_s": "90.000"}
    assert queued({"occurred_at": "2024-01-01"}, old, before) == {"occurred_at": "2024-01-01"}
    assert queued({"event": "x"}, "custom-key", before) == {"event": "x"}
    # A clock that went back since the capture never gives a negative wait.
    assert queued({}, old, before - 100 * 10**9) == {"queued_s": "0.000"}
    # The wait is taken when the item is posted (a later batch of a run waits longer).
    item = Item(old, {"params": {"event": "x"}, "body": {}}, 10)
    assert item.posted(before + 10 * 10**9)["params"]["queued_s"] == "100.000"
    assert item.item["params"] == {"event": "x"}  # the spooled entry is left as it was


def test_a_late_end_overtaken_by_a_real_end_changes_nothing(server: ServerProcess) -> None:
    end = {**PARAMS, "event": "session-end"}
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
        assert client.post("/hook", params=end, json={"reason": "logout"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        before = rows(server.data_dir, "SELECT ended_at, end_reason, page_id FROM sessions")
        late_end = {**end, "queued_s": "60", "ingest_key": "late-end"}
        assert client.post("/hook", params=late_end, json={"reason": "exit"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get("/api/v1/projects/default/p/pages/sessions/s1.md")
    assert rows(server.data_dir, "SELECT ended_at, end_reason, page_id FROM sessions") == before
    assert page.json()["version"] == 1
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(1,)]


def test_a_late_end_followed_by_later_work_in_the_same_batch_ends_nothing(
    server: ServerProcess,
) -> None:
    items = [
        {"params": {**PARAMS, "event": "session-end", "queued_s": "2"}, "body": {"reason": "exit"}},
        {"params": {**PARAMS, "queued_s": "1"}, "body": {"prompt": "resumed"}},
    ]
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
        answer = client.post("/hook/batch", json=items)
        assert [r["status"] for r in answer.json()["results"]] == [202, 202]
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    assert rows(server.data_dir, "SELECT ended_at, end_reason FROM sessions") == [(None, None)]
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(0,)]


def test_a_real_end_arriving_after_an_idle_end_gives_its_reason_and_keeps_one_handoff(
    data_dir: Path,
) -> None:
    server = idle_ended(data_dir)
    try:
        with server.client() as client:
            late_end = {**PARAMS, "event": "session-end", "queued_s": "0.1"}
            assert (
                client.post("/hook", params=late_end, json={"reason": "logout"}).status_code == 202
            )
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
            page = client.get("/api/v1/projects/default/p/pages/sessions/s1.md")
        [(reason, ended_at)] = rows(data_dir, "SELECT end_reason, ended_at FROM sessions")
        [(end_at,)] = rows(
            data_dir, "SELECT created_at FROM observations WHERE kind = 'session-end'"
        )
        assert (reason, ended_at) == ("logout", end_at)
        assert page.json()["version"] == 2  # written again, with its real end
        assert rows(data_dir, "SELECT count(*) FROM handoffs") == [(1,)]
    finally:
        server.stop()


def test_a_session_resumed_and_ended_again_while_offline_gets_its_new_end(
    server: ServerProcess,
) -> None:
    end = {**PARAMS, "event": "session-end"}
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
        assert client.post("/hook", params=end, json={"reason": "first-end"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        time.sleep(2.2)  # the offline part comes after the first end, by over a second
        items = [
            {"params": {**PARAMS, "queued_s": "0.6"}, "body": {"prompt": "resumed work"}},
            {"params": {**end, "queued_s": "0.3"}, "body": {"reason": "second-end"}},
        ]
        assert [r["status"] for r in client.post("/hook/batch", json=items).json()["results"]] == [
            202,
            202,
        ]
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    [(reason, ended_at)] = rows(server.data_dir, "SELECT end_reason, ended_at FROM sessions")
    [(second_at,)] = rows(
        server.data_dir, "SELECT max(created_at) FROM observations WHERE kind = 'session-end'"
    )
    assert (reason, ended_at) == ("second-end", second_at)
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(2,)]


def test_a_late_end_from_before_a_finalize_leaves_that_end_and_its_handoff(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
        time.sleep(1.2)
        finalized = client.post(
            "/api/v1/sessions/finalize", json={"project": "p", "session_id": "s1"}
        )
        assert finalized.status_code == 200, finalized.text
        before = rows(server.data_dir, "SELECT ended_at, end_reason FROM sessions")
        time.sleep(0.4)
        late_end = {**PARAMS, "event": "session-end", "queued_s": "0.8"}  # before the finalize
        assert client.post("/hook", params=late_end, json={"reason": "logout"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    assert rows(server.data_dir, "SELECT ended_at, end_reason FROM sessions") == before
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(1,)]


def test_work_done_offline_after_an_idle_end_ends_the_session_again(data_dir: Path) -> None:
    server = idle_ended(data_dir)
    try:
        with server.client() as client:
            time.sleep(1.6)  # the offline work comes after the idle end, by over a second
            items = [
                {"params": {**PARAMS, "queued_s": "0.3"}, "body": {"prompt": "offline work"}},
                {
                    "params": {**PARAMS, "event": "session-end", "queued_s": "0.1"},
                    "body": {"reason": "logout"},
                },
            ]
            assert client.post("/hook/batch", json=items).status_code == 200
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
        [(reason, ended_at)] = rows(data_dir, "SELECT end_reason, ended_at FROM sessions")
        [(end_at,)] = rows(
            data_dir, "SELECT created_at FROM observations WHERE kind = 'session-end'"
        )
        assert (reason, ended_at) == ("logout", end_at)
        assert rows(data_dir, "SELECT count(*) FROM handoffs") == [(2,)]  # one with that work
    finally:
        server.stop()


def test_a_live_end_after_an_idle_end_takes_its_place_without_a_second_handoff(
    data_dir: Path,
) -> None:
    server = idle_ended(data_dir)
    try:
        with server.client() as client:
            [(idle_at,)] = rows(data_dir, "SELECT ended_at FROM sessions")
            end = {**PARAMS, "event": "session-end"}
            assert client.post("/hook", params=end, json={"reason": "logout"}).status_code == 202
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
            page = client.get("/api/v1/projects/default/p/pages/sessions/s1.md")
        [(reason, ended_at)] = rows(data_dir, "SELECT end_reason, ended_at FROM sessions")
        [(end_at,)] = rows(
            data_dir, "SELECT created_at FROM observations WHERE kind = 'session-end'"
        )
        assert (reason, ended_at) == ("logout", end_at) and moment(ended_at) > moment(idle_at)
        assert page.json()["version"] == 2 and "logout" in page.json()["body"]
        assert rows(data_dir, "SELECT count(*) FROM handoffs") == [(1,)]
    finally:
        server.stop()


def ended_twice(server: ServerProcess, batch: list[dict[str, object]]) -> None:
    """The session works and ends ("first"); a second later ``batch`` arrives, then the
    late prompt a client delivered after it."""
    end = {**PARAMS, "event": "session-end"}
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "work"}).status_code == 202
        assert client.post("/hook", params=end, json={"reason": "first"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        time.sleep(1.0)
        for item in batch:
            answer = client.post("/hook", params=item["params"], json=item["body"])
            assert answer.status_code == 202, answer.text
        client.post("/api/v1/sessions/flush", params={"timeout": 30})


def test_a_second_live_end_is_the_end_and_keeps_the_one_handoff(server: ServerProcess) -> None:
    second = {"params": {**PARAMS, "event": "session-end"}, "body": {"reason": "second"}}
    # Work from between the two ends, delivered late: the second end still stands.
    between = {"params": {**PARAMS, "queued_s": "0.5"}, "body": {"prompt": "in between"}}
    ended_twice(server, [second, between])
    [(reason, ended_at)] = rows(server.data_dir, "SELECT end_reason, ended_at FROM sessions")
    [(second_at,)] = rows(
        server.data_dir, "SELECT max(created_at) FROM observations WHERE kind = 'session-end'"
    )
    assert (reason, ended_at) == ("second", second_at)
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(1,)]


def test_late_word_and_a_live_end_give_the_same_session_in_one_batch_or_two(
    server: ServerProcess,
) -> None:
    early = {"params": {**PARAMS, "queued_s": "30"}, "body": {"prompt": "before the first end"}}
    second = {"params": {**PARAMS, "event": "session-end"}, "body": {"reason": "second"}}
    ended_twice(server, [early, second])
    apart = rows(server.data_dir, "SELECT end_reason FROM sessions")
    with server.client() as client:
        other = {**PARAMS, "session_id": "s2"}
        end = {**other, "event": "session-end"}
        assert client.post("/hook", params=other, json={"prompt": "work"}).status_code == 202
        assert client.post("/hook", params=end, json={"reason": "first"}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        items = [
            {"params": {**other, "queued_s": "30"}, "body": {"prompt": "before the first end"}},
            {"params": end, "body": {"reason": "second"}},
        ]
        assert client.post("/hook/batch", json=items).status_code == 200
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    together = rows(server.data_dir, "SELECT end_reason FROM sessions WHERE session_id = 's2'")
    assert apart == together == [("second",)]
    assert rows(server.data_dir, "SELECT from_session, count(*) FROM handoffs GROUP BY 1") == [
        ("s1", 1),
        ("s2", 1),
    ]


def test_late_work_dated_just_after_the_end_counts_as_before_it(server: ServerProcess) -> None:
    """A retried event is dated a little late by its own delivery: work up to a second
    after the stored end is taken as before it; work well after it reopens the session."""
    end = {**PARAMS, "event": "session-end"}

    def post_dated(client: Any, session: str, after_end_s: float, event: str = "") -> None:
        waited = (datetime.now(UTC) - moment(ended[session])).total_seconds() - after_end_s
        late = {**PARAMS, "session_id": session, "queued_s": f"{waited:.3f}"}
        body = {"source": "resume"} if event else {"prompt": "late tool work"}
        answer = client.post("/hook", params={**late, "event": event or PARAMS["event"]}, json=body)
        assert answer.status_code == 202

    with server.client() as client:
        for session in ("s1", "s2", "s3"):
            params = {**PARAMS, "session_id": session}
            assert client.post("/hook", params=params, json={"prompt": "work"}).status_code == 202
            assert client.post("/hook", params={**end, "session_id": session}).status_code == 202
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        ended = dict(rows(server.data_dir, "SELECT session_id, ended_at FROM sessions"))
        time.sleep(2.5)
        post_dated(client, "s1", 0.2)
        post_dated(client, "s2", 2.0)
        post_dated(client, "s3", 0.2, "session-start")  # a resume is after the end, however soon
        post_dated(client, "s3", 0.3)
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get("/api/v1/projects/default/p/pages/sessions/s1.md")
    assert rows(server.data_dir, "SELECT session_id, ended_at IS NOT NULL FROM sessions") == [
        ("s1", 1),
        ("s2", 0),
        ("s3", 0),
    ]
    assert "late tool work" in page.json()["body"]
    assert rows(server.data_dir, "SELECT from_session FROM handoffs ORDER BY 1") == [
        ("s1",),
        ("s2",),
        ("s3",),
    ]
