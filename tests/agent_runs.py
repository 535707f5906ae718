"""Driving the real agent CLIs offline: set each up with ``ai-memory setup``, run one turn.

Every CLI comes from ``.cache/agents`` (``make agents``) or PATH, and talks only to
the fake model server on loopback and to the test's ai-memory server.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import AI_MEMORY, ServerProcess, clean_env
from tests.fake_models import COMMAND, FakeModels

AGENTS = Path(__file__).resolve().parent.parent / ".cache" / "agents"
CACHE = AGENTS / "node_modules" / ".bin"
# OpenCode's config-folder dependencies, as OpenCode itself installs them (``make agents``).
OPENCODE_CONFIG = AGENTS / "opencode-config"
PROJECT = {"workspace": "default", "project": "acme-shop"}
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
        f"{AGENTS}; npm could not (offline?), so this agent is not driven"
    )


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


def run_opencode(fake: FakeModels, home: Path, checkout: Path, prompt: str) -> str:
    """``opencode run`` on an OpenAI-compatible provider whose baseURL is the fake server.

    The provider package (``@ai-sdk/openai-compatible``) is built into OpenCode; the only
    thing it would fetch is its plugin API for the config folder, linked in from the cache.
    The prompt goes as separate words: ``opencode run`` quotes an argument with spaces.
    """
    opencode = cli("opencode")
    config_path = home / ".config" / "opencode" / "opencode.json"
    config = json.loads(config_path.read_text())
    model = {"name": "Fake model", "tool_call": True}
    config["provider"] = {
        "fake": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Fake",
            "options": {"baseURL": f"{fake.url}/v1", "apiKey": "offline"},
            "models": {"fake-model": model},
        }
    }
    config.update(
        {"model": "fake/fake-model", "small_model": "fake/fake-model", "autoupdate": False}
    )
    config["share"] = "disabled"
    config_path.write_text(json.dumps(config))
    return _run([opencode, "run", *prompt.split()], opencode_env(home, checkout), checkout)


def opencode_env(home: Path, checkout: Path) -> dict[str, str]:
    """OpenCode's environment: nothing fetched, nothing shared, the other agents' files unread.

    Its plugin API for the config folder is linked in from the cache, else OpenCode
    installs it from npm on start.
    """
    folder = home / ".config" / "opencode"
    if (OPENCODE_CONFIG / "node_modules").is_dir() and not (folder / "node_modules").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(OPENCODE_CONFIG / name, folder / name)
        (folder / "node_modules").symlink_to(OPENCODE_CONFIG / "node_modules")
    return agent_env(
        home,
        PWD=str(checkout),  # OpenCode takes its directory from PWD
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_SHARE="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_CLAUDE_CODE="1",  # not the other agent's files in the same home
    )


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> str:
    done = subprocess.run(
        argv,
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=RUN_TIMEOUT,
        stdin=subprocess.DEVNULL,
    )
    output = done.stdout.decode(errors="replace") + done.stderr.decode(errors="replace")
    assert done.returncode == 0, output
    return output


def flushed(server: ServerProcess) -> dict[str, Any]:
    """The project's sessions once every event the hooks fired is stored and every page written.

    A hook that ran out of its time budget (a loaded machine) leaves its event in the
    spool for the next hook run; the last event of a run has none after it, so the
    spool is delivered first, as a user would with ``ai-memory hook-drain``.
    """
    drain = subprocess.run(
        [*AI_MEMORY, "hook-drain", "--data-dir", str(server.data_dir), "--server", server.url],
        capture_output=True, env=clean_env(), timeout=120,
    )  # fmt: skip
    assert drain.returncode == 0, drain.stdout.decode() + drain.stderr.decode()
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


def observations(server: ServerProcess, kind: str) -> list[str]:
    """The bodies of every stored observation of ``kind``, over all sessions."""
    bodies: list[str] = []
    with server.client() as client:
        for session in client.get("/api/v1/sessions", params=PROJECT).json()["sessions"]:
            answer = client.get(
                f"/api/v1/sessions/{session['session_id']}/observations",
                params={**PROJECT, "limit": 200},
            ).json()
            bodies += [o["body"] for o in answer["observations"] if o["kind"] == kind]
    return bodies


def stored_prompts(server: ServerProcess) -> list[str]:
    return observations(server, "user-prompt")


def assert_captured(server: ServerProcess, agent: str, prompt: str) -> str:
    """The agent's session ended with a page holding its prompt, command and answer."""
    session = session_of(server, agent)
    assert session["ended_at"] is not None and session["page_id"] is not None
    body = page_of(server, session["session_id"])
    assert prompt in body and COMMAND in body and "add a test for the greeting" in body
    return str(session["session_id"])


def memory_tools(fake: FakeModels) -> set[str]:
    return {name for name in fake.seen.tools if "memory_" in name and "ai-memory" in name}


def sent_since(fake: FakeModels, before: int) -> str:
    """Every request body the agents sent the model after the first ``before``."""
    return "\n".join(json.dumps(b) for b in fake.seen.bodies[before:])
