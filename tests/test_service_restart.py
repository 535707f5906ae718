"""Killed while hook clients spool, restarted the way the unit restarts it: nothing is lost.

The server is killed with SIGKILL in the middle of a stream of hook events; the clients
keep running against the dead server and spool. The server is then started with the
``ExecStart`` line of the rendered systemd unit, and no hook runs after that: the drain
at start-up alone must deliver every spooled event, once, and the next SessionStart gets
the handoff of a session that ended while the server was down.
"""

from __future__ import annotations

import shlex
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pygit2

from ai_memory.service.render import render
from ai_memory.service.spec import ServiceSpec
from tests.conftest import ServerProcess, clean_env, free_port
from tests.hooks_support import hook_env, make_checkout, run_hook

CLIENTS = 3
EVENTS = 100

CLIENT_SCRIPT = """
import io, json, sys
from ai_memory.hookclient.main import run
client, count, cwd = sys.argv[1], int(sys.argv[2]), sys.argv[3]
for i in range(count):
    payload = {"session_id": f"spool-{client}", "cwd": cwd,
               "hook_event_name": "UserPromptSubmit", "prompt": f"event {client}-{i}"}
    run(["--agent", "claude-code", "--event", "UserPromptSubmit"],
        stdin=io.BytesIO(json.dumps(payload).encode()), stdout=io.StringIO())
"""


def stored_prompts(data_dir: Path) -> list[str]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        rows = conn.execute("SELECT body FROM observations WHERE kind = 'user-prompt'")
        return [row[0] for row in rows]
    finally:
        conn.close()


def spooled(data_dir: Path) -> int:
    return len(list((data_dir / "spool").glob("*.json")))


def exec_start(data_dir: Path) -> list[str]:
    """The command line the systemd unit runs, read back from the rendered unit."""
    unit = render(ServiceSpec("linux", Path(sys.executable), data_dir))
    line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    return shlex.split(line.removeprefix("ExecStart=").replace("%%", "%"))


def start_like_the_unit(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    log = open(data_dir / "unit-server.log", "ab")  # noqa: SIM115 - closed with the process
    process = subprocess.Popen(
        exec_start(data_dir),
        cwd=data_dir,  # WorkingDirectory=
        env=clean_env(PYTHONUNBUFFERED="1", AI_MEMORY_SERVER__BIND=f"127.0.0.1:{port}"),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        assert process.poll() is None, (data_dir / "unit-server.log").read_text()[-2000:]
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.05)
    raise AssertionError("the restarted server never answered /healthz")


def test_events_spooled_while_the_server_was_killed_arrive_once_at_restart(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    server = ServerProcess(data_dir).start()
    env = hook_env(data_dir, server.url)
    clients = [
        subprocess.Popen(
            [sys.executable, "-c", CLIENT_SCRIPT, str(n), str(EVENTS), str(checkout)], env=env
        )
        for n in range(CLIENTS)
    ]
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(stored_prompts(data_dir)) < 40:
            time.sleep(0.02)
        server.kill()  # SIGKILL, mid-stream
        for proc in clients:
            assert proc.wait(timeout=120) == 0
    finally:
        for proc in clients:
            if proc.poll() is None:
                proc.kill()
    # A whole session happens while the server is down: its end is spooled too.
    ended = {"session_id": "while-down", "cwd": str(checkout)}
    for event, extra in (
        ("UserPromptSubmit", {"prompt": "Ship the crash-proof spool"}),
        ("SessionEnd", {"reason": "prompt_input_exit"}),
    ):
        code, _ = run_hook(
            "claude-code", event, {**ended, "hook_event_name": event, **extra}, env, checkout
        )
        assert code == 0
    waiting = spooled(data_dir)
    assert waiting > 0, "no event met the dead server"

    port = free_port()
    unit = start_like_the_unit(data_dir, port)
    try:
        deadline = time.monotonic() + 60
        while spooled(data_dir) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert spooled(data_dir) == 0, "the start-up drain left events in the spool"
        assert not list((data_dir / "spool" / "rejected").glob("*.json"))
        url = f"http://127.0.0.1:{port}"
        with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {server.token}"}) as c:
            assert c.post("/api/v1/sessions/flush", params={"timeout": 60}).json()["pending"] == 0
            # The routers and the MCP endpoint are built on a thread after the first answers;
            # waiting for them keeps that build from eating the hook's 150 ms budget below.
            assert c.get("/admin/status").status_code == 200
            c.post("/mcp", json={})
        start = {"session_id": "after", "cwd": str(checkout), "hook_event_name": "SessionStart"}
        code, out = run_hook(
            "codex",
            "SessionStart",
            {**start, "source": "startup"},
            hook_env(data_dir, url),
            checkout,
        )
        assert code == 0
        assert "Ship the crash-proof spool" in out["hookSpecificOutput"]["additionalContext"]
    finally:
        unit.send_signal(signal.SIGTERM)  # KillSignal= of the unit
        # uvicorn re-raises the SIGTERM once it has shut down cleanly; systemd counts
        # that as a clean stop (no restart), as it does exit status 0.
        assert unit.wait(timeout=60) in (0, -signal.SIGTERM)
    prompts = stored_prompts(data_dir)
    expected = {f"event {c}-{i}" for c in range(CLIENTS) for i in range(EVENTS)}
    expected.add("Ship the crash-proof spool")
    assert sorted(prompts) == sorted(expected)  # every one, none twice
    repo = pygit2.Repository(str(data_dir / "wiki"))
    assert repo.status() == {}  # the last checkpoint was written at the clean stop
