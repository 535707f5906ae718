"""install-mcp and setup on real config files: foreign entries kept, ours once, still valid."""

from __future__ import annotations

import json
import os
import stat
import tomllib
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ServerProcess, clean_env, run_cli, run_cli_here

FOREIGN_JSON: dict[str, Any] = {
    "theme": "dark",
    "mcpServers": {"github": {"command": "gh-mcp", "args": ["--stdio"]}},
}
FOREIGN_OPENCODE: dict[str, Any] = {
    "$schema": "https://opencode.ai/config.json",
    "mcp": {"browser": {"type": "local", "command": ["browser-mcp"], "enabled": True}},
}
FOREIGN_TOML = """\
model = "gpt-5-codex"

[mcp_servers.github]
command = "gh-mcp"
args = ["--stdio"]

[mcp_servers.github.env]
GH_HOST = "github.com"
"""
CASES = {
    "claude-code": ("claude.json", json.dumps(FOREIGN_JSON)),
    "gemini": ("settings.json", json.dumps(FOREIGN_JSON)),
    "cursor": ("mcp.json", json.dumps(FOREIGN_JSON)),
    "opencode": ("opencode.json", json.dumps(FOREIGN_OPENCODE)),
    "codex": ("config.toml", FOREIGN_TOML),
}


def load(path: Path) -> dict[str, Any]:
    text = path.read_text()
    return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)


def servers(client: str, config: dict[str, Any]) -> dict[str, Any]:
    key = {"codex": "mcp_servers", "opencode": "mcp"}.get(client, "mcpServers")
    found: dict[str, Any] = config[key]
    return found


@pytest.mark.parametrize("client", sorted(CASES))
def test_install_mcp_twice_keeps_foreign_entries_and_adds_ours_once(
    client: str, data_dir: Path, tmp_path: Path
) -> None:
    name, original = CASES[client]
    path = tmp_path / name
    path.write_text(original)
    os.chmod(path, 0o640)
    shown = run_cli_here(
        "install-mcp", "--client", client, "--config-file", str(path), data_dir=data_dir
    )
    assert shown.returncode == 0, shown.stderr
    assert path.read_text() == original  # without --apply nothing is written
    first = run_cli_here(
        "install-mcp", "--client", client, "--config-file", str(path), "--apply", data_dir=data_dir
    )
    assert first.returncode == 0, first.stderr
    after_first = path.read_text()
    second = run_cli_here(
        "install-mcp", "--client", client, "--config-file", str(path), "--apply", data_dir=data_dir
    )
    assert second.returncode == 0 and b"already configured" in second.stdout
    assert path.read_text() == after_first
    config = load(path)
    entries = servers(client, config)
    assert set(entries) - {"ai-memory"} == set(servers(client, load_original(client, original)))
    ours = json.dumps(entries["ai-memory"])
    assert "mcp-bridge" in ours and str(data_dir) in ours
    token = (data_dir / "auth-tokens" / "default").read_text().strip()
    assert token not in path.read_text()
    backups = list(tmp_path.glob(f"{name}.bak-*"))
    assert len(backups) == 1 and backups[0].read_text() == original
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    if client == "codex":
        assert config["model"] == "gpt-5-codex"
        assert config["mcp_servers"]["github"]["env"] == {"GH_HOST": "github.com"}
    else:
        assert config.get("theme", "dark") == "dark"


def load_original(client: str, original: str) -> dict[str, Any]:
    return tomllib.loads(original) if client == "codex" else json.loads(original)


def test_http_transport_references_the_token_by_environment(data_dir: Path, tmp_path: Path) -> None:
    codex = tmp_path / "config.toml"
    done = run_cli_here(
        "install-mcp",
        "--client",
        "codex",
        "--transport",
        "http",
        "--config-file",
        str(codex),
        "--apply",
        data_dir=data_dir,
    )
    assert done.returncode == 0, done.stderr
    entry = tomllib.loads(codex.read_text())["mcp_servers"]["ai-memory"]
    assert entry["bearer_token_env_var"] == "AI_MEMORY_AUTH_TOKEN"
    assert entry["url"].endswith("/mcp")
    assert stat.S_IMODE(codex.stat().st_mode) == 0o600
    claude = tmp_path / "claude.json"
    run_cli_here(
        "install-mcp",
        "--client",
        "claude-code",
        "--transport",
        "http",
        "--config-file",
        str(claude),
        "--apply",
        data_dir=data_dir,
    )
    entry = json.loads(claude.read_text())["mcpServers"]["ai-memory"]
    assert entry["type"] == "http"
    assert entry["headers"]["Authorization"] == "Bearer ${AI_MEMORY_AUTH_TOKEN}"
    switched = run_cli_here(
        "install-mcp",
        "--client",
        "claude-code",
        "--config-file",
        str(claude),
        "--apply",
        data_dir=data_dir,
    )
    assert switched.returncode == 0
    entry = json.loads(claude.read_text())["mcpServers"]["ai-memory"]
    assert entry["type"] == "stdio" and "mcp-bridge" in entry["args"]


def test_a_broken_config_file_is_refused_and_left_alone(data_dir: Path, tmp_path: Path) -> None:
    for name, client in (("broken.json", "cursor"), ("broken.toml", "codex")):
        path = tmp_path / name
        path.write_text("{ not valid [[")
        done = run_cli_here(
            "install-mcp",
            "--client",
            client,
            "--config-file",
            str(path),
            "--apply",
            data_dir=data_dir,
        )
        assert done.returncode == 1 and b"fix it first" in done.stderr
        assert path.read_text() == "{ not valid [["
        assert not list(tmp_path.glob(f"{name}.bak-*"))
    unknown = run_cli("install-mcp", "--client", "vim", data_dir=data_dir)
    assert unknown.returncode == 1 and b"unknown client" in unknown.stderr


def test_setup_installs_hooks_and_mcp_then_checks_itself(
    server: ServerProcess, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    checkout = tmp_path / "work"
    checkout.mkdir()
    (checkout / ".ai-memory.toml").write_text('project = "set-up"\n')
    env = clean_env(HOME=str(home))
    done = run_cli(
        "setup",
        "--agent",
        "claude-code",
        "--server",
        server.url,
        data_dir=server.data_dir,
        env=env,
        cwd=checkout,
    )
    assert done.returncode == 0, done.stderr
    assert b"MCP memory_status answered from default/set-up" in done.stdout
    settings = json.loads((home / ".claude" / "settings.json").read_text())
    assert "SessionStart" in settings["hooks"]
    mcp = json.loads((home / ".claude.json").read_text())["mcpServers"]["ai-memory"]
    assert mcp["type"] == "stdio" and "mcp-bridge" in mcp["args"]
    again = run_cli(
        "setup",
        "--agent",
        "claude-code",
        "--server",
        server.url,
        data_dir=server.data_dir,
        env=env,
        cwd=checkout,
    )
    assert again.returncode == 0, again.stderr
    assert json.loads((home / ".claude.json").read_text())["mcpServers"]["ai-memory"] == mcp


def test_setup_says_when_the_server_is_not_running(data_dir: Path, tmp_path: Path) -> None:
    env = clean_env(HOME=str(tmp_path))
    done = run_cli(
        "setup",
        "--agent",
        "cursor",
        "--server",
        "http://127.0.0.1:9",
        data_dir=data_dir,
        env=env,
        cwd=tmp_path,
    )
    assert done.returncode == 1 and b"ai-memory serve" in done.stderr
    assert (tmp_path / ".cursor" / "mcp.json").exists()
