"""The command lines agents run: ``python -I -S …/agent_entry.py hook|mcp-bridge``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ai_memory import agent_entry
from ai_memory.cli import hook_install
from ai_memory.cli.mcp import bridge_command
from tests.conftest import ServerProcess, clean_env, free_port

# What an ordinary hook run and the bridge must never load: each costs milliseconds.
SLOW = {
    "pathlib",
    "typing",
    "socket",
    "selectors",
    "urllib",
    "tomllib",
    "http",
    "email",
    "ssl",
    "dataclasses",
    "contextlib",
    "unicodedata",
    "site",
    "re",
    "json",
    "enum",
}
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def imported(stderr: str) -> set[str]:
    """Top-level module names from ``-X importtime`` output."""
    names = set()
    for line in stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            names.add(name.split(".")[0])
    return names


def checkout(root: Path) -> Path:
    folder = root / "repo"
    folder.mkdir()
    (folder / ".ai-memory.toml").write_text('project = "entry"  # the marker\n')
    return folder


def test_installed_hook_commands_run_the_entry_isolated(tmp_path: Path) -> None:
    command = hook_install.hook_command("claude-code", "Stop", tmp_path / "data")
    prefix = f"{sys.executable} -I -S {Path(agent_entry.__file__).resolve()} hook --agent"
    assert command.startswith(prefix)
    assert hook_install.is_own({"command": command})
    plugin = hook_install.plugin_source("opencode", tmp_path / "data")
    assert json.dumps(agent_entry.command("hook")[:4])[1:-1] in plugin


def test_the_hook_spools_redacted_and_loads_nothing_slow_when_the_server_is_down(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    server = f"http://127.0.0.1:{free_port()}"
    command = hook_install.hook_command("claude-code", "UserPromptSubmit", data, server=server)
    secret = "ghp_" + "a1B2" * 10
    payload = {"session_id": "e-1", "cwd": str(checkout(tmp_path)), "prompt": f"use {secret}"}
    for _ in range(2):  # the first run may compile what the pattern cache lacks
        ran = subprocess.run(
            ["sh", "-c", command.replace(" -I -S ", " -I -S -X importtime ", 1)],
            input=json.dumps(payload).encode(),
            capture_output=True,
            env=clean_env(),
            timeout=60,
        )
        assert ran.returncode == 0 and json.loads(ran.stdout) == {}
    loaded = imported(ran.stderr.decode())
    assert "ai_memory" in loaded and not loaded & SLOW, sorted(loaded & SLOW)
    spooled = sorted((data / "spool").glob("*.json"))
    entries = [json.loads(path.read_text()) for path in spooled]
    assert len({e["params"]["ingest_key"] for e in entries}) == 2
    for path, entry in zip(spooled, entries, strict=True):
        assert entry["params"]["project"] == "entry"
        assert "[REDACTED]" in entry["body"]["prompt"] and secret not in path.read_text()
    assert "unreachable" in (data / "logs" / "hook.log").read_text()


def test_hook_help_through_the_entry_and_the_console_command() -> None:
    for argv in (
        [*hook_install.hook_argv(), "--help"],
        [sys.executable, "-m", "ai_memory", "hook", "--help"],
    ):
        shown = subprocess.run(argv, capture_output=True, text=True, env=clean_env(), timeout=60)
        assert shown.returncode == 0 and shown.stdout.startswith("usage: ai-memory hook")
    wrong = subprocess.run(
        agent_entry.command("reindex"), capture_output=True, text=True, timeout=60
    )
    assert wrong.returncode == 1 and "hook|mcp-bridge" in wrong.stderr


def test_the_bridge_entry_answers_initialize_loading_nothing_slow(server: ServerProcess) -> None:
    launch = bridge_command(server.data_dir, server.url)
    assert launch[1:3] == ["-I", "-S"] and launch[4] == "mcp-bridge"
    launch.insert(3, "-Ximporttime")
    proc = subprocess.run(
        launch,
        input=(json.dumps(INITIALIZE) + "\n").encode(),
        capture_output=True,
        env=clean_env(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    answer = json.loads(proc.stdout.splitlines()[0])
    assert answer["result"]["serverInfo"]["name"] == "ai-memory"
    loaded = imported(proc.stderr.decode())
    assert "ai_memory" in loaded and not loaded & SLOW, sorted(loaded & SLOW)


def test_the_network_budget_counts_from_the_start_of_the_run() -> None:
    from ai_memory.hookclient.main import network_deadline

    assert round(network_deadline(10.0, 10.01), 3) == 10.11  # quick start-up: 100 ms after it
    assert round(network_deadline(10.0, 10.08), 3) == 10.15  # slower: up to 150 ms from start
    assert round(network_deadline(10.0, 10.3), 3) == 10.35  # a machine so loaded: still 50 ms
    assert network_deadline(10.0, 10.47) == 10.5  # never past the last moment
