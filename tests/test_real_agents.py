"""The real agent CLIs, driven offline against a fake model server on loopback.

Each agent is set up with ``ai-memory setup`` in its own home, runs one scripted
turn (a prompt, one shell command, an answer), and its real hooks and MCP calls
go to a real server. The next agent, a different CLI, must get the handoff in
its session-start context. ``make test`` installs the CLIs from npm into
``.cache/agents``; a CLI that is not there skips with the reason. The drivers
are in tests/agent_runs.py.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent_runs import (
    RUN_TIMEOUT,
    agent_env,
    assert_captured,
    cli,
    memory_tools,
    run_claude,
    run_codex,
    run_gemini,
    run_opencode,
    sent_since,
    setup,
    stored_prompts,
)
from tests.conftest import AI_MEMORY, ServerProcess, clean_env
from tests.fake_models import FakeModels
from tests.hooks_support import make_checkout

pytestmark = pytest.mark.slow

MEMORY_TOOLS = 15


@pytest.fixture
def fake() -> Iterator[FakeModels]:
    with FakeModels() as models:
        yield models


@pytest.fixture
def home(tmp_path: Path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    return folder


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return make_checkout(tmp_path / "shop")


def test_claude_code_hands_off_to_gemini(
    server: ServerProcess, fake: FakeModels, home: Path, checkout: Path
) -> None:
    cli("claude"), cli("gemini")
    setup("claude-code", server, home, checkout)
    run_claude(fake, home, checkout, "print a greeting for the cart page")
    assert_captured(server, "claude-code", "print a greeting for the cart page")
    offered = memory_tools(fake)
    assert len(offered) >= MEMORY_TOOLS and "mcp__ai-memory__memory_query" in offered
    before = len(fake.seen.bodies)

    setup("gemini", server, home, checkout)
    run_gemini(fake, home, checkout, "carry on with the cart page")
    sent = sent_since(fake, before)
    assert "Handoff from claude-code" in sent and "print a greeting for the cart page" in sent
    assert_captured(server, "gemini", "carry on with the cart page")
    gemini_names = memory_tools(fake) - offered  # Gemini names them mcp_ai-memory_…
    assert {n.removeprefix("mcp_ai-memory_") for n in gemini_names} == {
        n.removeprefix("mcp__ai-memory__") for n in offered
    }
    for prompt in stored_prompts(server):
        assert "Recorded history" not in prompt and "untrusted" not in prompt.lower()
    assert sorted(stored_prompts(server)) == [
        "carry on with the cart page",
        "print a greeting for the cart page",
    ]


def test_gemini_hands_off_to_claude_code(
    server: ServerProcess, fake: FakeModels, home: Path, checkout: Path
) -> None:
    cli("claude"), cli("gemini")
    setup("gemini", server, home, checkout)
    run_gemini(fake, home, checkout, "print a greeting for the invoices")
    assert_captured(server, "gemini", "print a greeting for the invoices")
    before = len(fake.seen.bodies)

    setup("claude-code", server, home, checkout)
    run_claude(fake, home, checkout, "carry on with the invoices")
    sent = sent_since(fake, before)
    assert "Handoff from gemini" in sent and "add a test for the greeting" in sent
    assert_captured(server, "claude-code", "carry on with the invoices")
    assert {p for p in stored_prompts(server)} == {
        "print a greeting for the invoices",
        "carry on with the invoices",
    }


def test_codex_hands_off_to_claude_code(
    server: ServerProcess, fake: FakeModels, home: Path, checkout: Path
) -> None:
    cli("codex"), cli("claude")
    done = subprocess.run(
        [*AI_MEMORY, "setup", "--agent", "codex", "--server", server.url, "--no-service",
         "--data-dir", str(server.data_dir)],
        capture_output=True, env=clean_env(HOME=str(home)), cwd=checkout, timeout=120,
    )  # fmt: skip
    # The hook reached the server, and setup stops saying what only the user can do.
    assert done.returncode == 2 and b"reached" in done.stdout and b"/hooks" in done.stderr
    output = run_codex(fake, home, checkout, "print a greeting for the orders")
    assert "hook: SessionStart Completed" in output and "hook: Stop Completed" in output
    assert "clamping" not in output  # our SessionEnd limit is within Codex's 3 s
    assert "memory_query" in fake.seen.text()  # the MCP tools reached the model
    assert_captured(server, "codex", "print a greeting for the orders")
    before = len(fake.seen.bodies)

    setup("claude-code", server, home, checkout)
    run_claude(fake, home, checkout, "carry on with the orders")
    sent = sent_since(fake, before)
    assert "Handoff from codex" in sent and "print a greeting for the orders" in sent
    assert_captured(server, "claude-code", "carry on with the orders")


def test_claude_mcp_list_leaves_no_session(
    server: ServerProcess, home: Path, checkout: Path, tmp_path: Path
) -> None:
    claude = cli("claude")
    setup("claude-code", server, home, checkout)
    elsewhere = make_checkout(tmp_path / "elsewhere", "git@github.com:acme/elsewhere.git")
    env = agent_env(home, ANTHROPIC_API_KEY="sk-ant-offline-test", DISABLE_TELEMETRY="1")
    done = subprocess.run(
        [claude, "mcp", "list"], capture_output=True, env=env, cwd=elsewhere, timeout=RUN_TIMEOUT
    )
    assert b"ai-memory" in done.stdout, done.stdout + done.stderr
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        projects = {p["name"] for p in client.get("/api/v1/projects").json()["projects"]}
    assert "acme-elsewhere" not in projects


def test_claude_code_hands_off_to_opencode_and_back(
    server: ServerProcess, fake: FakeModels, home: Path, checkout: Path
) -> None:
    """OpenCode's generated plugin captures, and injects the handoff it is given."""
    cli("claude"), cli("opencode")
    setup("claude-code", server, home, checkout)
    run_claude(fake, home, checkout, "print a greeting for the basket")
    assert_captured(server, "claude-code", "print a greeting for the basket")
    claude_tools = memory_tools(fake)
    before = len(fake.seen.bodies)

    setup("opencode", server, home, checkout)
    plugin = (home / ".config" / "opencode" / "plugins" / "ai-memory.js").read_text()
    assert server.url in plugin and f"--server {server.url}" not in plugin  # argv, not a shell line
    run_opencode(fake, home, checkout, "carry on with the basket")
    turns = [b for b in fake.seen.bodies[before:] if b.get("tools")]
    system = [m["content"] for m in turns[0]["messages"] if m["role"] == "system"]
    # The handoff is in the system prompt of the model call, not in the user's prompt.
    assert any("Handoff from claude-code" in text for text in system), system
    assert "print a greeting for the basket" in "\n".join(system)
    opencode_tools = {
        name for b in turns for t in b["tools"] if "ai-memory" in (name := t["function"]["name"])
    }
    # OpenCode's MCP client reached the memory server: every tool was offered to the model.
    assert {n.removeprefix("ai-memory_") for n in opencode_tools} == {
        n.removeprefix("mcp__ai-memory__") for n in claude_tools
    }
    assert_captured(server, "opencode", "carry on with the basket")
    before = len(fake.seen.bodies)

    run_claude(fake, home, checkout, "check the basket greeting")
    sent = sent_since(fake, before)
    assert "Handoff from opencode" in sent and "carry on with the basket" in sent
    assert sorted(stored_prompts(server)) == [
        "carry on with the basket",
        "check the basket greeting",
        "print a greeting for the basket",
    ]


CURSOR_NOT_DRIVEN = (
    "Cursor's CLI (cursor-agent) is not a package on npm or PyPI: it installs only with "
    "`curl https://cursor.com/install | bash` from Cursor's own download host, which this "
    "machine cannot reach, and it sends every model call to Cursor's servers (it takes no "
    "base URL for a fake model server). tests/test_agent_hook_files.py checks the hooks file "
    "Cursor reads against its documented format and runs each command with documented payloads."
)


def test_cursor_agent() -> None:
    pytest.skip(CURSOR_NOT_DRIVEN)
