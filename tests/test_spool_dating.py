"""An event retried from the spool is dated when it was captured, not when it got through."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import queued
from ai_memory.hookclient.main import run
from tests.conftest import ServerProcess, free_port
from tests.hooks_support import hook_env, make_checkout

PARAMS = {"project": "p", "event": "user-prompt", "agent": "codex", "session_id": "s1"}


def rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    uri = f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        return conn.execute(sql).fetchall()


def moment(stamp: object) -> datetime:
    assert isinstance(stamp, str)
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


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
    [(started, last)] = rows(server.data_dir, "SELECT started_at, last_event_at FROM sessions")
    assert moment(started) == times[0] and moment(last) == live  # neither moved the wrong way

    # The session page, what the next agent reads, tells them in the order they happened.
    hook(hook_env(server.data_dir, server.url), checkout, "", "SessionEnd")
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get("/api/v1/projects/default/acme-shop/pages/sessions/r-1.md")
    assert page.status_code == 200, page.text
    body = page.json()["body"]
    assert -1 < body.find("queued 0") < body.find("queued 2") < body.find("live one"), body


def test_queued_s_dates_an_event_back_and_never_moves_a_session_back(
    server: ServerProcess,
) -> None:
    with server.client() as client:
        assert client.post("/hook", params=PARAMS, json={"prompt": "now"}).status_code == 202
        late = {**PARAMS, "queued_s": "3600"}
        assert client.post("/hook", params=late, json={"prompt": "an hour ago"}).status_code == 202
        clamped = {**PARAMS, "queued_s": "999999999999.5"}
        assert client.post("/hook", params=clamped, json={"prompt": "a year"}).status_code == 202
    now = datetime.now(UTC)
    (_, first), (_, hour), (_, year) = rows(
        server.data_dir, "SELECT body, created_at FROM observations ORDER BY id"
    )
    assert now - timedelta(minutes=61) < moment(hour) < now - timedelta(minutes=59)
    assert now - timedelta(days=367) < moment(year) < now - timedelta(days=365)
    [(started, last)] = rows(server.data_dir, "SELECT started_at, last_event_at FROM sessions")
    assert (started, last) == (year, first)


def test_a_malformed_queued_s_is_refused_and_stores_nothing(server: ServerProcess) -> None:
    with server.client() as client:
        for bad in ("-1", "abc", "1e5", "nan", "1.2.3", "12.", "0x10", "1_000"):
            answer = client.post("/hook", params={**PARAMS, "queued_s": bad}, json={"prompt": "x"})
            assert answer.status_code == 400 and "queued_s" in answer.text, (bad, answer.text)
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
