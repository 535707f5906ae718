"""The stdio bridge as agents run it: a subprocess speaking MCP on stdin/stdout."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from ai_memory.mcp.bridge import TIMEOUT_S, Forwarder, Target
from tests.conftest import ServerProcess, clean_env, free_port
from tests.mcp_support import bridge, data, db_path, failure, module_server

BRIDGE = [sys.executable, "-m", "ai_memory", "mcp-bridge"]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


def test_bridge_forwards_tools_with_the_launch_directory(
    srv: ServerProcess, tmp_path: Path
) -> None:
    checkout = tmp_path / "repo"
    (checkout / "deep").mkdir(parents=True)
    (checkout / ".ai-memory.toml").write_text('project = "bridged"\n')

    async def scenario() -> dict[str, Any]:
        async with bridge(srv, checkout / "deep") as client:
            tools = {t.name for t in (await client.list_tools()).tools}
            assert "memory_query" in tools and client.instructions
            wrote = data(
                await client.call_tool(
                    "memory_write_page", {"path": "notes/b.md", "body": "via the bridge"}
                )
            )
            read = data(await client.call_tool("memory_read_page", {"path": "notes/b.md"}))
            stale = failure(
                await client.call_tool(
                    "memory_write_page",
                    {"path": "notes/b.md", "body": "x", "expected_page_id": wrote["page_id"] + 9},
                )
            )
            try:
                await client.call_tool("memory_recent", {"limit": 0})
            except MCPError as exc:
                return {
                    "wrote": wrote,
                    "read": read,
                    "stale": stale,
                    "code": exc.code,
                    "message": exc.message,
                }
            raise AssertionError("invalid limit was accepted")

    out = asyncio.run(scenario())
    assert out["wrote"]["project"] == "bridged"
    assert out["wrote"]["scope"]["source"] == "launch_dir"
    assert out["read"]["body"].strip() == "via the bridge"
    assert out["stale"]["error"] == "precondition_failed"
    assert out["code"] == -32602 and "limit" in out["message"]


def test_bridge_forwards_the_session_id(srv: ServerProcess, tmp_path: Path) -> None:
    # A session that only started leaves no trace; the prompt that follows makes it one.
    with srv.client() as client:
        for event, extra in (("SessionStart", {}), ("UserPromptSubmit", {"prompt": "go on"})):
            hook = {"session_id": "sess-b", "cwd": str(tmp_path), "hook_event_name": event}
            posted = client.post(
                "/hook",
                params={
                    "workspace": "default",
                    "project": "by-session",
                    "agent": "claude-code",
                    "event": event,
                    "session_id": "sess-b",
                },
                json={**hook, **extra},
            )
            assert posted.status_code == 202, posted.text

    async def scenario() -> dict[str, Any]:
        async with bridge(srv, tmp_path, AI_MEMORY_SESSION_ID="sess-b") as client:
            return data(await client.call_tool("memory_status", {}))

    status = asyncio.run(scenario())
    assert status["scope"]["source"] == "session"
    assert status["scope"]["project"] == "by-session"


def run_bridge(
    args: list[str], env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*BRIDGE, *args], input=stdin, capture_output=True, text=True, env=env, timeout=30
    )


def test_bridge_fails_at_once_when_the_server_is_unreachable(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    done = run_bridge(
        ["--server", url, "--data-dir", str(tmp_path)],
        clean_env(),
        stdin='{"jsonrpc":"2.0","id":1,"method":"ping"}\n',
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "cannot reach the ai-memory server" in done.stderr and url in done.stderr


def test_bridge_fails_at_once_when_the_token_is_refused(srv: ServerProcess) -> None:
    env = clean_env(AI_MEMORY_AUTH_TOKEN="not-the-token")
    done = run_bridge(
        ["--server", srv.url], env, stdin='{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    )
    assert done.returncode == 1 and done.stdout == ""
    assert "the token in AI_MEMORY_AUTH_TOKEN was refused" in done.stderr


def test_bridge_answers_bad_lines_and_keeps_going(srv: ServerProcess) -> None:
    lines = [
        "not json",
        json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}),
        json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 8,
                "method": "tools/call",
                "params": {"name": "memory_status", "arguments": {"project": "raw"}},
            }
        ),
    ]
    done = run_bridge(
        ["--server", srv.url, "--data-dir", str(srv.data_dir)],
        clean_env(),
        stdin="\n".join(lines) + "\n",
    )
    assert done.returncode == 0, done.stderr
    answers = [json.loads(line) for line in done.stdout.splitlines()]
    assert [a.get("id") for a in answers] == [None, 7, 8]
    assert answers[0]["error"]["code"] == -32700
    assert answers[2]["result"]["structuredContent"]["scope"]["project"] == "raw"


def test_bridge_imports_stay_lean() -> None:
    probe = (
        "import sys; import ai_memory.cli.entry, ai_memory.mcp.bridge; "
        "heavy = {'fastapi', 'uvicorn', 'pygit2', 'mcp', 'pydantic', 'typer', 'httpx'}; "
        "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=30, check=True
    )
    assert done.stdout.strip() == "[]"


def test_bridge_usage_and_bad_options(tmp_path: Path) -> None:
    shown = run_bridge(["--help"], clean_env())
    assert shown.returncode == 0 and "usage: ai-memory mcp-bridge" in shown.stdout
    bad = run_bridge(["--port", "1"], clean_env())
    assert bad.returncode == 1 and "unknown option '--port'" in bad.stderr


def tool_line(request_id: int, name: str, **arguments: Any) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return json.dumps(message).encode()


def forwarder(srv: ServerProcess, timeout: float = TIMEOUT_S) -> Forwarder:
    target = Target(srv.url, srv.token, None, str(srv.data_dir), None)
    return Forwarder(target, timeout=timeout)


def feedback_rows(srv: ServerProcess, path: str) -> int:
    with sqlite3.connect(db_path(srv)) as conn:
        row = conn.execute("SELECT count(*) FROM page_feedback WHERE path = ?", (path,)).fetchone()
    return int(row[0])


def wait_for_rows(srv: ServerProcess, path: str) -> int:
    """Feedback rows once the server has worked through what it was sent."""
    deadline = time.monotonic() + 30
    while feedback_rows(srv, path) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    with srv.client() as client:  # one more round trip: anything queued before it is done
        assert client.get("/healthz").status_code == 200
    return feedback_rows(srv, path)


def test_bridge_does_not_resend_a_call_that_timed_out(srv: ServerProcess) -> None:
    bridged = forwarder(srv, timeout=1.0)
    wrote = json.loads(
        bridged.forward(tool_line(1, "memory_write_page", project="once", path="f.md", body="x"))
        or b"{}"
    )
    assert wrote["result"]["isError"] is False
    assert srv.process is not None
    os.kill(srv.process.pid, signal.SIGSTOP)  # the server takes the call but cannot answer
    try:
        answer = bridged.forward(
            tool_line(2, "memory_feedback", project="once", path="f.md", signal="helpful")
        )
    finally:
        os.kill(srv.process.pid, signal.SIGCONT)
    assert wait_for_rows(srv, "f.md") == 1  # run once, not once per attempt
    error = json.loads(answer or b"{}")
    assert error["id"] == 2 and error["error"]["code"] == -32000
    assert "no answer" in error["error"]["message"] and "may still" in error["error"]["message"]
    again = json.loads(bridged.forward(tool_line(3, "memory_status", project="once")) or b"{}")
    assert again["result"]["structuredContent"]["project"]["pages"] == 1


def test_bridge_resends_on_a_keep_alive_connection_the_server_closed(
    srv: ServerProcess,
) -> None:
    bridged = forwarder(srv)
    bridged.check()
    assert bridged.reused  # the next call would go out on the same connection
    srv.stop()
    srv.start()  # same port: the old connection is dead, the server is back
    answer = json.loads(bridged.forward(tool_line(4, "memory_status", project="alive")) or b"{}")
    assert answer["result"]["structuredContent"]["scope"]["project"] == "alive"


def test_bridge_does_not_resend_on_a_fresh_connection(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    bridged = Forwarder(Target(url, None, None, str(tmp_path), None))
    answer = json.loads(bridged.forward(tool_line(5, "memory_status")) or b"{}")
    assert answer["id"] == 5 and "cannot reach the ai-memory server" in answer["error"]["message"]
