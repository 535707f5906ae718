"""The real agent CLIs, driven offline against a fake model server on loopback.

Each agent is set up with ``ai-memory setup`` in its own home, runs one scripted
turn (a prompt, one shell command, an answer), and its real hooks and MCP calls
go to a real server. The next agent, a different CLI, must get the handoff in
its session-start context. ``make test`` installs the CLIs from npm into
``.cache/agents``; a CLI that is not there skips with the reason.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AI_MEMORY, ServerProcess, clean_env
from tests.fake_models import COMMAND, FakeModels
from tests.hooks_support import make_checkout

pytestmark = pytest.mark.slow

CACHE = Path(__file__).resolve().parent.parent / ".cache" / "agents" / "node_modules" / ".bin"
PROJECT = {"workspace": "default", "project": "acme-shop"}
MEMORY_TOOLS = 15
RUN_TIMEOUT = 90


def cli(name: str) -> str:
    """The agent CLI from the cache (or PATH); skip the test, saying why, when absent."""
    found = CACHE / name
    if found.exists():
        return str(found)
    on_path = shutil.which(name)
    if on_path:
        return on_path
    pytest.skip(
        f"{name} is not installed: `make test` installs the agent CLIs from npm into "
        f"{CACHE.parent.parent}; npm could not (offline?), so this agent is not driven"
    )


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


def setup(agent: str, server: ServerProcess, home: Path, checkout: Path) -> None:
    done = subprocess.run(
        [*AI_MEMORY, "setup", "--agent", agent, "--server", server.url, "--no-service",
         "--data-dir", str(server.data_dir)],
        capture_output=True, env=clean_env(HOME=str(home)), cwd=checkout, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode() + done.stderr.decode()
    assert b"reached" in done.stdout  # the hook self-check went through


def agent_env(home: Path, **extra: str) -> dict[str, str]:
    env = clean_env(HOME=str(home), **extra)
    env.update({"NO_COLOR": "1", "CI": "1", "TERM": "dumb"})
    return env


def run_claude(fake: FakeModels, home: Path, checkout: Path, prompt: str) -> str:
    env = agent_env(
        home,
        ANTHROPIC_BASE_URL=fake.url,
        ANTHROPIC_API_KEY="sk-ant-offline-test",
        DISABLE_TELEMETRY="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
    )
    argv = [cli("claude"), "-p", prompt, "--allowedTools", "Bash", "--output-format", "text"]
    return _run(argv, env, checkout)


def run_gemini(fake: FakeModels, home: Path, checkout: Path, prompt: str) -> str:
    gemini = cli("gemini")
    settings_path = home / ".gemini" / "settings.json"
    settings = json.loads(settings_path.read_text())
    settings.setdefault("security", {})["auth"] = {"selectedType": "gemini-api-key"}
    # Nothing leaves the host: no usage statistics, no update checks.
    settings["privacy"] = {"usageStatisticsEnabled": False}
    settings.setdefault("general", {}).update({"disableAutoUpdate": True, "disableUpdateNag": True})
    settings_path.write_text(json.dumps(settings))
    # MCP servers stay disabled in a folder the user has not trusted.
    (home / ".gemini" / "trustedFolders.json").write_text(
        json.dumps({str(checkout): "TRUST_FOLDER"})
    )
    env = agent_env(
        home, GOOGLE_GEMINI_BASE_URL=fake.url, GEMINI_API_KEY="offline", GEMINI_CLI_NO_RELAUNCH="1"
    )
    return _run([gemini, "-p", prompt, "--yolo", "-m", "gemini-2.5-flash"], env, checkout)


def run_codex(fake: FakeModels, home: Path, checkout: Path, prompt: str) -> str:
    """``codex exec`` on a custom model provider whose base_url is the fake server.

    Codex runs hooks only once the user has reviewed them; a test cannot press the key,
    so it passes the flag Codex documents for automation that vets hook sources itself.
    """
    codex = cli("codex")
    config = home / ".codex" / "config.toml"
    provider = (
        'model = "fake-model"\nmodel_provider = "fake"\ncheck_for_update_on_startup = false\n'
        "\n[model_providers.fake]\n"
        f'name = "fake"\nbase_url = "{fake.url}/v1"\nwire_api = "responses"\n'
        'env_key = "FAKE_MODEL_KEY"\n\n'
    )
    config.write_text(provider + config.read_text())
    argv = [codex, "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox", prompt]  # fmt: skip
    return _run(argv, agent_env(home, FAKE_MODEL_KEY="offline"), checkout)


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(argv, capture_output=True, env=env, cwd=cwd, timeout=RUN_TIMEOUT)
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, output
    return output


def flushed(server: ServerProcess) -> dict[str, Any]:
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        sessions: dict[str, Any] = client.get("/api/v1/sessions", params=PROJECT).json()
    return sessions


def session_of(server: ServerProcess, agent: str) -> dict[str, Any]:
    found = [s for s in flushed(server)["sessions"] if s["agent"] == agent]
    assert found, f"no {agent} session was captured"
    session: dict[str, Any] = found[0]
    return session


def page_of(server: ServerProcess, session_id: str) -> str:
    with server.client() as client:
        page = client.get(f"/api/v1/projects/default/acme-shop/pages/sessions/{session_id}.md")
    assert page.status_code == 200, page.text
    body: str = page.json()["body"]
    return body


def stored_prompts(server: ServerProcess) -> list[str]:
    prompts: list[str] = []
    with server.client() as client:
        for session in client.get("/api/v1/sessions", params=PROJECT).json()["sessions"]:
            answer = client.get(
                f"/api/v1/sessions/{session['session_id']}/observations",
                params={**PROJECT, "limit": 200},
            ).json()
            prompts += [o["body"] for o in answer["observations"] if o["kind"] == "user-prompt"]
    return prompts


def assert_captured(server: ServerProcess, agent: str, prompt: str) -> str:
    """The agent's session ended with a page holding its prompt, command and answer."""
    session = session_of(server, agent)
    assert session["ended_at"] is not None and session["page_id"] is not None
    body = page_of(server, session["session_id"])
    assert prompt in body and COMMAND in body and "add a test for the greeting" in body
    return str(session["session_id"])


def memory_tools(fake: FakeModels) -> set[str]:
    return {name for name in fake.seen.tools if "memory_" in name and "ai-memory" in name}


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
    sent = "\n".join(json.dumps(b) for b in fake.seen.bodies[before:])
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
    sent = "\n".join(json.dumps(b) for b in fake.seen.bodies[before:])
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
    sent = "\n".join(json.dumps(b) for b in fake.seen.bodies[before:])
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


def test_opencode_lists_the_memory_server(
    server: ServerProcess, home: Path, checkout: Path
) -> None:
    opencode = cli("opencode")
    setup("opencode", server, home, checkout)
    plugin = home / ".config" / "opencode" / "plugins" / "ai-memory.js"
    assert f"--server {server.url}" not in plugin.read_text()  # argv form, not a shell line
    assert server.url in plugin.read_text()
    env = agent_env(home, OPENCODE_DISABLE_AUTOUPDATE="1", OPENCODE_DISABLE_SHARE="1")
    done = subprocess.run(
        [opencode, "mcp", "list"], capture_output=True, env=env, cwd=checkout, timeout=RUN_TIMEOUT
    )
    listing = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert "ai-memory" in listing and "connected" in listing.lower(), listing
    assert os.path.exists(plugin)
