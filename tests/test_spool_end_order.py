"""A session's end is delivered after its own spooled work, so it never ends empty while
that work waits; other sessions' backlog goes after the end."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from contextlib import closing
from pathlib import Path

from ai_memory.hookclient.drain import drain
from ai_memory.hookclient.main import run
from ai_memory.maintenance.init import read_token
from tests.conftest import ServerProcess, clean_env, free_port
from tests.hooks_support import hook_env, make_checkout

PAGE = "/api/v1/projects/default/acme-shop/pages/sessions/{}.md"
# A retried event is dated to within its transfer: a 1 MiB one, on a loaded machine, some
# tens of milliseconds late. An agent's end comes well after its last tool call; so here.
WORK_TO_END_S = 0.5


def rows(data_dir: Path, sql: str) -> list[tuple[object, ...]]:
    uri = f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        return conn.execute(sql).fetchall()


def hook(env: dict[str, str], checkout: Path, session: str, event: str, prompt: str = "") -> None:
    payload: dict[str, object] = {"session_id": session, "hook_event_name": event}
    if prompt:
        payload["prompt"] = prompt
    if event == "PostToolUse":  # about 1 MiB once cut: 16 fields of 64 KiB
        payload["tool_name"] = "Bash"
        output = "\n".join(f"test_case_{i} passed in {i % 97} ms" for i in range(3000))
        payload["tool_response"] = {f"part{i}": output for i in range(16)}
    send(env, checkout, payload, ["--agent", "claude-code", "--event", event])


def send(env: dict[str, str], checkout: Path, payload: dict[str, object], argv: list[str]) -> None:
    stdin = io.BytesIO(json.dumps({**payload, "cwd": str(checkout)}).encode())
    assert run(argv, stdin=stdin, stdout=io.StringIO(), env=env) == 0


def spooled(data_dir: Path) -> list[dict[str, object]]:
    return [json.loads(f.read_text()) for f in sorted((data_dir / "spool").glob("*.json"))]


def test_a_session_whose_work_is_all_spooled_ends_with_it(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    live = hook_env(server.data_dir, server.url)
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    hook(live, checkout, "r-1", "SessionStart")
    # An older backlog of another session, as long as a run's whole share of retries.
    for i in range(32):
        hook(dead, checkout, "other", "UserPromptSubmit", f"other prompt {i}")
    for i in range(3):
        hook(dead, checkout, "r-1", "UserPromptSubmit", f"offline prompt {i}")
    hook(live, checkout, "r-1", "SessionEnd")
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get(PAGE.format("r-1"))
    assert page.status_code == 200, page.text
    assert all(f"offline prompt {i}" in page.json()["body"] for i in range(3))
    [(ended_at, reason)] = rows(
        server.data_dir, "SELECT ended_at, end_reason FROM sessions WHERE session_id = 'r-1'"
    )
    assert ended_at is not None and reason == "session-end"
    assert rows(server.data_dir, "SELECT from_session FROM handoffs") == [("r-1",)]
    # What is left is the other session's backlog, which goes after the end.
    left = {entry["params"]["session_id"] for entry in spooled(server.data_dir)}  # type: ignore[index]
    assert left <= {"other"}


def test_a_queue_smaller_than_the_backlog_takes_it_in_order_in_parts(
    data_dir: Path, tmp_path: Path
) -> None:
    # The server's ingest queue holds 16 events; a hook run retries 32 at a time.
    env = clean_env(AI_MEMORY_HOOKS__QUEUE_SIZE="16")
    server = ServerProcess(data_dir, env=env).start()
    try:
        checkout = make_checkout(tmp_path / "shop")
        live = hook_env(data_dir, server.url)
        dead = hook_env(data_dir, f"http://127.0.0.1:{free_port()}")
        hook(live, checkout, "r-1", "SessionStart")
        for i in range(20):
            hook(dead, checkout, "r-1", "UserPromptSubmit", f"offline prompt {i}")
        hook(dead, checkout, "r-1", "PostToolUse")  # a batch of its own
        time.sleep(WORK_TO_END_S)
        # The first 16 of the session's work fit, so the end goes after them, and the
        # rest follows it as late events (in this run, or, past its budget, the next).
        hook(live, checkout, "r-1", "SessionEnd")
        left = {e["params"]["event"] for e in spooled(data_dir)}  # type: ignore[index]
        assert left <= {"UserPromptSubmit", "PostToolUse"}
        token = read_token(data_dir / "auth-tokens" / "default")
        assert drain(data_dir, server.url, token).remaining == 0
        with server.client() as client:
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
            page = client.get(PAGE.format("r-1"))
        assert page.status_code == 200, page.text
        assert all(f"offline prompt {i}" in page.json()["body"] for i in range(20))
        assert rows(data_dir, "SELECT end_reason FROM sessions") == [("session-end",)]
        [(content,)] = rows(data_dir, "SELECT content FROM handoffs")
        assert json.loads(str(content))["last_prompts"][-1] == "offline prompt 19"

        # Another session's backlog, more than the queue holds: a run stores the oldest
        # 16 and stops at the first refused, so nothing newer goes past it.
        for i in range(40):
            hook(dead, checkout, "r-2", "UserPromptSubmit", f"backlog prompt {i}")
        hook(live, checkout, "r-3", "UserPromptSubmit", "next session")
        stored = rows(data_dir, "SELECT body FROM observations WHERE body LIKE 'backlog%'")
        assert sorted(body for (body,) in stored) == sorted(
            f"backlog prompt {i}" for i in range(16)
        )
        assert len(spooled(data_dir)) == 24
        report = drain(data_dir, server.url, token, batch=64)  # more than the queue, too
        assert (report.delivered, report.remaining) == (24, 0)
    finally:
        server.stop()


def test_an_end_still_goes_when_its_session_has_more_spooled_than_a_run_sends(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    live = hook_env(server.data_dir, server.url)
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    hook(live, checkout, "r-1", "SessionStart")
    for i in range(40):
        hook(dead, checkout, "r-1", "UserPromptSubmit", f"offline prompt {i}")
    hook(live, checkout, "r-1", "SessionEnd")
    # The session's first 32 came before its end; the rest follow as late word of it.
    left = spooled(server.data_dir)
    assert len(left) == 8 and all(e["params"]["event"] == "UserPromptSubmit" for e in left)  # type: ignore[index]
    assert rows(server.data_dir, "SELECT end_reason FROM sessions") == [("session-end",)]
    token = read_token(server.data_dir / "auth-tokens" / "default")
    assert drain(server.data_dir, server.url, token).remaining == 0
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get(PAGE.format("r-1"))
    assert "offline prompt 39" in page.json()["body"]
    # Its one handoff, dated at its end, tells of the work that came after the end too.
    [(content,)] = rows(server.data_dir, "SELECT content FROM handoffs")
    assert json.loads(str(content))["last_prompts"][-1] == "offline prompt 39"


def test_an_end_goes_after_a_batch_of_its_work_however_big_the_backlog(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    live = hook_env(server.data_dir, server.url)
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    hook(live, checkout, "r-1", "SessionStart")
    for _ in range(12):  # 12 MiB of the session's own work waiting
        hook(dead, checkout, "r-1", "PostToolUse")
    time.sleep(WORK_TO_END_S)
    hook(live, checkout, "r-1", "SessionEnd")
    # A batch of its work, then the end; the rest follows as late events.
    assert rows(server.data_dir, "SELECT end_reason FROM sessions") == [("session-end",)]
    left = [e["params"]["event"] for e in spooled(server.data_dir)]  # type: ignore[index]
    assert len(left) <= 11 and set(left) <= {"PostToolUse"}
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    assert rows(server.data_dir, "SELECT from_session FROM handoffs") == [("r-1",)]


def test_an_end_without_a_session_id_waits_for_the_agents_work_without_one(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    live = hook_env(server.data_dir, server.url)
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    generic = ["--agent", "generic"]
    # Named by the payload alone, as the server reads it: "type" and "session".
    send(live, checkout, {"type": "session-start", "session": "gen-7"}, generic)
    send(live, checkout, {"type": "session-start"}, generic)
    for i in range(3):
        prompt = {"type": "user-prompt", "prompt": f"offline {i}"}
        send(dead, checkout, {**prompt, "session": "gen-7"}, generic)
        send(dead, checkout, prompt, generic)
    send(live, checkout, {"type": "session-end", "session": "gen-7"}, generic)
    send(live, checkout, {"type": "session-end"}, generic)
    assert spooled(server.data_dir) == []
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
    ended = rows(server.data_dir, "SELECT session_id, end_reason FROM sessions ORDER BY 1")
    assert [reason for _, reason in ended] == ["session-end", "session-end"]
    assert "gen-7" in [session for session, _ in ended]
    assert rows(server.data_dir, "SELECT count(*) FROM handoffs") == [(2,)]


def test_an_event_too_large_for_the_server_holds_back_what_was_captured_after_it(
    data_dir: Path, tmp_path: Path
) -> None:
    server = ServerProcess(data_dir, env=clean_env(AI_MEMORY_SERVER__MAX_REQUEST_BYTES="16384"))
    server.start()
    try:
        checkout = make_checkout(tmp_path / "shop")
        live = hook_env(data_dir, server.url)
        dead = hook_env(data_dir, f"http://127.0.0.1:{free_port()}")
        hook(dead, checkout, "r-1", "UserPromptSubmit", "big " + "word " * 6000)  # ~30 KB
        for i in range(1, 5):
            hook(dead, checkout, "r-1", "UserPromptSubmit", f"small {i}")
        # The first run's retry is refused as too large, split, and the big one shrunk:
        # the small ones, captured after it, wait for it.
        hook(live, checkout, "r-1", "UserPromptSubmit", "live one")
        hook(live, checkout, "r-1", "UserPromptSubmit", "live two")
        token = read_token(data_dir / "auth-tokens" / "default")
        assert drain(data_dir, server.url, token).remaining == 0
        stored = [body for (body,) in rows(data_dir, "SELECT body FROM observations ORDER BY id")]
        backlog = [body for body in stored if not body.startswith("live")]
        assert backlog[0].startswith("big") and backlog[1:] == [f"small {i}" for i in range(1, 5)]
    finally:
        server.stop()
