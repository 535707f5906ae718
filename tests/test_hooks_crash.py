"""The server killed with SIGKILL while hook clients stream: every event stored exactly once."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import ServerProcess, run_cli
from tests.hooks_support import hook_env, make_checkout

CLIENTS = 5
EVENTS_PER_CLIENT = 400

CLIENT_SCRIPT = """
import io, json, sys
from ai_memory.hookclient.main import run
client, count, cwd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(count):
    payload = {"session_id": f"kill-{client}", "cwd": cwd,
               "hook_event_name": "UserPromptSubmit", "prompt": f"event {client}-{i}"}
    run(["--agent", "claude-code", "--event", "UserPromptSubmit"],
        stdin=io.BytesIO(json.dumps(payload).encode()), stdout=io.StringIO())
"""


def stored_prompts(data_dir: Path) -> list[str]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        return [
            r[0] for r in conn.execute("SELECT body FROM observations WHERE kind = 'user-prompt'")
        ]
    finally:
        conn.close()


def test_sigkill_while_streaming_loses_and_duplicates_nothing(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    env = hook_env(server.data_dir, server.url)
    clients = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT_SCRIPT, str(n), str(EVENTS_PER_CLIENT), str(checkout)],
            env=env,
        )
        for n in range(CLIENTS)
    ]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(stored_prompts(server.data_dir)) < 300:
            time.sleep(0.02)
        server.kill()
        time.sleep(0.3)  # clients keep running against a dead server and spool
        server.start()
        for proc in clients:
            assert proc.wait(timeout=120) == 0
    finally:
        for proc in clients:
            if proc.poll() is None:
                proc.kill()
    # Some events did meet the dead server and were spooled for later.
    assert "server unreachable" in (server.data_dir / "logs" / "hook.log").read_text()
    drained = run_cli("hook-drain", "--server", server.url, data_dir=server.data_dir, env=env)
    assert drained.returncode == 0, drained.stderr
    assert list((server.data_dir / "spool").glob("*.json")) == []
    server.stop()
    prompts = stored_prompts(server.data_dir)
    expected = {f"event {c}-{i}" for c in range(CLIENTS) for i in range(EVENTS_PER_CLIENT)}
    assert len(prompts) == len(expected) == CLIENTS * EVENTS_PER_CLIENT
    assert set(prompts) == expected


def test_pages_a_crash_left_unwritten_are_written_at_restart(server: ServerProcess) -> None:
    items = []
    for n in range(128):
        p = {"project": "shop", "agent": "generic", "session_id": f"crash-{n}"}
        items.append(
            {
                "params": {**p, "event": "user-prompt", "ingest_key": f"p{n}"},
                "body": {"prompt": f"conversation {n} about the kill test"},
            }
        )
        items.append({"params": {**p, "event": "session-end", "ingest_key": f"e{n}"}, "body": {}})
    with server.client() as client:
        answer = client.post("/hook/batch", json=items)
    server.kill()
    assert {r["status"] for r in answer.json()["results"]} == {202}
    folder = server.data_dir / "wiki" / "default" / "shop" / "sessions"
    # However far the follow-up work got before the kill, make the sessions look as if
    # none of their pages had been recorded: restart must write every one.
    conn = sqlite3.connect(server.data_dir / "db" / "memory.sqlite")
    with conn:
        conn.execute("UPDATE sessions SET page_id = NULL WHERE project = 'shop'")
    conn.close()
    server.start()
    with server.client() as client:
        assert client.post("/api/v1/sessions/flush", params={"timeout": 60}).json()["pending"] == 0
        for n in (0, 127):
            page = client.get(f"/api/v1/projects/default/shop/pages/sessions/crash-{n}.md")
            assert f"conversation {n} about the kill test" in page.json()["body"]
    assert len(list(folder.glob("*.md"))) == 128
    server.stop()
    conn = sqlite3.connect(server.data_dir / "db" / "memory.sqlite")
    try:
        missing = conn.execute(
            "SELECT count(*) FROM sessions WHERE project = 'shop' AND page_id IS NULL"
        ).fetchone()[0]
    finally:
        conn.close()
    assert missing == 0
