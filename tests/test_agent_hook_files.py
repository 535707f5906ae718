"""Hook files for agents whose CLI cannot be driven here, checked against their documented format.

Cursor's CLI is not on npm: it installs from cursor.com and talks only to Cursor's
servers, so tests/test_real_agents.py cannot run it offline (it skips, saying so).
Instead the file ``install-hooks --agent cursor`` writes is checked against the
format Cursor documents (cursor.com/docs/agent/hooks), and each command in it is
run the way Cursor runs it (through a shell, the documented payload on stdin)
against a real server: the session is captured, its page written, and the next
conversation gets the handoff in ``additional_context``. The generated OpenCode
plugin is also checked to be a module node can load.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AI_MEMORY, ServerProcess, clean_env
from tests.hooks_support import make_checkout

# Cursor's documented agent hook events and the keys of one hook entry.
CURSOR_EVENTS = frozenset(
    {
        "sessionStart",
        "sessionEnd",
        "preToolUse",
        "postToolUse",
        "postToolUseFailure",
        "subagentStart",
        "subagentStop",
        "beforeShellExecution",
        "afterShellExecution",
        "beforeMCPExecution",
        "afterMCPExecution",
        "beforeReadFile",
        "afterFileEdit",
        "beforeSubmitPrompt",
        "preCompact",
        "stop",
        "afterAgentResponse",
        "afterAgentThought",
    }
)
CURSOR_ENTRY_KEYS = frozenset({"command", "type", "timeout", "matcher", "failClosed", "loop_limit"})
PROJECT = {"workspace": "default", "project": "acme-shop"}
URL = "http://127.0.0.1:49411"


def install(agent: str, home: Path, data_dir: Path, url: str) -> None:
    done = subprocess.run(
        [*AI_MEMORY, "install-hooks", "--agent", agent, "--apply",
         "--data-dir", str(data_dir), "--server", url],
        capture_output=True, env=clean_env(HOME=str(home)), timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()


def cursor_hooks(home: Path) -> dict[str, Any]:
    config: dict[str, Any] = json.loads((home / ".cursor" / "hooks.json").read_text())
    return config


def run_cursor_hook(
    config: dict[str, Any], event: str, payload: dict[str, Any], cwd: Path
) -> dict[str, Any]:
    """Run the event's command as Cursor does: a shell line, the payload as JSON on stdin."""
    (entry,) = config["hooks"][event]
    body = {"hook_event_name": event, "generation_id": "gen-1", "cursor_version": "2.4.0"}
    done = subprocess.run(
        ["sh", "-c", entry["command"]],
        input=json.dumps({**body, **payload}).encode(),
        capture_output=True,
        cwd=cwd,
        env=clean_env(),
        timeout=entry["timeout"] + 30,
    )
    assert done.returncode == 0, done.stderr.decode()
    answer: dict[str, Any] = json.loads(done.stdout or b"{}")  # Cursor reads JSON only
    return answer


def test_cursor_hooks_file_has_cursors_documented_shape(data_dir: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    install("cursor", home, data_dir, URL)
    config = cursor_hooks(home)
    assert set(config) == {"version", "hooks"} and config["version"] == 1
    assert set(config["hooks"]) <= CURSOR_EVENTS
    # What a session page and a handoff need.
    assert {"sessionStart", "beforeSubmitPrompt", "stop", "sessionEnd"} <= set(config["hooks"])
    for event, entries in config["hooks"].items():
        assert isinstance(entries, list) and len(entries) == 1, event
        (entry,) = entries
        assert set(entry) <= CURSOR_ENTRY_KEYS, entry
        assert isinstance(entry["command"], str) and f"--event {event}" in entry["command"]
        assert f"--server {URL}" in entry["command"]
        # Seconds, as Cursor counts them (not milliseconds, as Gemini CLI does).
        assert isinstance(entry["timeout"], int) and 1 <= entry["timeout"] <= 60


def test_cursor_hook_commands_capture_a_session_and_hand_it_off(
    server: ServerProcess, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    checkout = make_checkout(tmp_path / "shop")
    install("cursor", home, server.data_dir, server.url)
    config = cursor_hooks(home)
    first = {"conversation_id": "conv-cursor-1", "workspace_roots": [str(checkout)]}
    run_cursor_hook(config, "sessionStart", {**first, "session_id": "conv-cursor-1"}, home)
    prompt = {"prompt": "print a greeting for the till", "attachments": []}
    run_cursor_hook(config, "beforeSubmitPrompt", {**first, **prompt}, home)
    shell = {"command": "echo hello-from-cursor", "output": "hello-from-cursor\n", "duration": 12}
    run_cursor_hook(config, "afterShellExecution", {**first, **shell, "cwd": str(checkout)}, home)
    edit = {
        "file_path": str(checkout / "till.py"),
        "edits": [{"old_string": "", "new_string": "x"}],
    }
    run_cursor_hook(config, "afterFileEdit", {**first, **edit}, home)
    answer = {"text": "Printed it.\n\nNext steps:\n- add a test for the till"}
    run_cursor_hook(config, "afterAgentResponse", {**first, **answer}, home)
    run_cursor_hook(config, "stop", {**first, "status": "completed", "loop_count": 0}, home)
    end = {"session_id": "conv-cursor-1", "reason": "completed", "duration_ms": 900}
    run_cursor_hook(config, "sessionEnd", {**first, **end}, home)

    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        (session,) = client.get("/api/v1/sessions", params=PROJECT).json()["sessions"]
        assert session["agent"] == "cursor" and session["ended_at"] is not None
        page = client.get("/api/v1/projects/default/acme-shop/pages/sessions/conv-cursor-1.md")
    assert page.status_code == 200, page.text
    body = page.json()["body"]
    assert "print a greeting for the till" in body and "echo hello-from-cursor" in body
    assert "till.py" in body
    # The assistant's answer, with its next steps (kept unless capture_assistant is off).
    assert "Printed it." in body and "add a test for the till" in body

    second = {"conversation_id": "conv-cursor-2", "session_id": "conv-cursor-2"}
    start = run_cursor_hook(
        config, "sessionStart", {**second, "workspace_roots": [str(checkout)]}, home
    )
    assert set(start) == {"additional_context"}  # Cursor's sessionStart output field
    assert "Handoff from cursor" in start["additional_context"]
    assert "print a greeting for the till" in start["additional_context"]


def test_opencode_plugin_is_a_module_node_can_load(data_dir: Path, tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed, so the generated OpenCode plugin cannot be checked")
    home = tmp_path / "home"
    install("opencode", home, data_dir, URL)
    plugin = home / ".config" / "opencode" / "plugins" / "ai-memory.js"
    module = tmp_path / "ai-memory.mjs"
    shutil.copy(plugin, module)
    load = (
        f"const m = await import('{module.as_uri()}');"
        "const hooks = await m.AiMemory({ directory: '/tmp' });"
        "console.log(Object.keys(hooks).sort().join(' '));"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", load], capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr.decode()
    assert done.stdout.decode().split() == sorted(
        [
            "chat.message",
            "event",
            "experimental.chat.system.transform",
            "experimental.text.complete",
            "tool.execute.after",
            "tool.execute.before",
        ]
    )
