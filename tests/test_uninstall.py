"""``ai-memory uninstall`` on a HOME where install-hooks and install-mcp wrote every file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import ServerProcess, clean_env, run_cli, run_cli_here

FOREIGN_SETTINGS = json.dumps(
    {
        "model": "opus",
        "hooks": {
            "PreToolUse": [
                {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh"}]}
            ]
        },
    },
    indent=4,
)
FOREIGN_MCP = '{"mcpServers": {"github": {"command": "gh-mcp"}}, "theme": "dark"}\n'
FOREIGN_CODEX = '# my codex settings\nmodel = "o3"\n\n[mcp_servers.github]\ncommand = "gh-mcp"\n'
FOREIGN_GEMINI = '{\n  "theme": "GitHub",\n  "mcpServers": {"other": {"command": "x"}}\n}\n'


def populate_home(home: Path) -> dict[Path, bytes]:
    """The files a user had before installing: some agents configured, some not at all."""
    before = {
        home / ".claude" / "settings.json": FOREIGN_SETTINGS.encode(),
        home / ".claude.json": FOREIGN_MCP.encode(),
        home / ".codex" / "config.toml": FOREIGN_CODEX.encode(),
        home / ".gemini" / "settings.json": FOREIGN_GEMINI.encode(),
    }
    for path, data in before.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return before


def install_everything(home: Path, data_dir: Path) -> None:
    env = clean_env(HOME=str(home))
    for agent in ("claude-code", "codex", "gemini", "cursor", "opencode"):
        done = run_cli("install-hooks", "--agent", agent, "--apply", data_dir=data_dir, env=env)
        assert done.returncode == 0, done.stderr
        done = run_cli("install-mcp", "--client", agent, "--apply", data_dir=data_dir, env=env)
        assert done.returncode == 0, done.stderr


def snapshot(home: Path) -> dict[str, bytes]:
    return {str(p.relative_to(home)): p.read_bytes() for p in home.rglob("*") if p.is_file()}


def ours_left(home: Path) -> list[str]:
    """Files (backups aside) still naming our hook command or our MCP server."""
    found = []
    for path in home.rglob("*"):
        if not path.is_file() or ".bak-" in path.name:
            continue
        text = path.read_text(errors="replace")
        if "agent_entry.py" in text or "mcp-bridge" in text or '"ai-memory"' in text:
            found.append(str(path))
    return found


@pytest.mark.slow  # the real CLI (and a real server) several times
def test_uninstall_restores_backups_and_keeps_foreign_entries(
    tmp_path: Path, data_dir: Path
) -> None:
    home = tmp_path / "home"
    before = populate_home(home)
    install_everything(home, data_dir)
    assert len(ours_left(home)) == 9  # gemini's one file holds its hooks and its MCP entry
    # The user edits two files after the install, in their own formatting: only our
    # entries may go from them, every other byte stays.
    claude_json = home / ".claude.json"
    edited = json.loads(claude_json.read_text())
    edited["projects"] = {"/work": {"allowedTools": []}}
    claude_json.write_text(json.dumps(edited, indent=4) + "\n")
    codex_hooks = home / ".codex" / "hooks.json"
    hooks = json.loads(codex_hooks.read_text())
    foreign = {"matcher": "", "hooks": [{"type": "command", "command": "notify.sh"}]}
    hooks["hooks"]["Stop"].append(foreign)
    codex_hooks.write_text(json.dumps(hooks))
    env = clean_env(HOME=str(home))

    refused = run_cli("uninstall", data_dir=data_dir, env=env)
    assert refused.returncode == 1 and b"--yes" in refused.stderr
    installed = snapshot(home)
    dry = run_cli_here("uninstall", "--dry-run", "--json", data_dir=data_dir, env=env)
    assert dry.returncode == 0, dry.stderr
    assert snapshot(home) == installed  # a dry run changes nothing
    plan = json.loads(dry.stdout)
    actions = {
        Path(p).relative_to(home).as_posix(): c["action"]
        for p, c in plan["details"]["files"].items()
    }
    assert actions == {
        ".claude.json": "edit",
        ".claude/settings.json": "restore",
        ".codex/config.toml": "restore",
        ".codex/hooks.json": "edit",
        ".config/opencode/opencode.json": "remove",
        ".config/opencode/plugins/ai-memory.js": "remove",
        ".cursor/hooks.json": "remove",
        ".cursor/mcp.json": "remove",
        ".gemini/settings.json": "restore",
    }

    done = run_cli_here("uninstall", "--yes", "--json", data_dir=data_dir, env=env)
    assert done.returncode == 0, done.stderr
    assert {**json.loads(done.stdout), "dry_run": True} == plan
    assert ours_left(home) == []
    for path in (
        home / ".claude" / "settings.json",
        home / ".codex" / "config.toml",
        home / ".gemini" / "settings.json",
    ):
        assert path.read_bytes() == before[path]  # byte for byte
    expected = {**json.loads(FOREIGN_MCP), "projects": {"/work": {"allowedTools": []}}}
    assert claude_json.read_text() == json.dumps(expected, indent=4) + "\n"
    assert codex_hooks.read_text() == json.dumps({"hooks": {"Stop": [foreign]}})
    assert not (home / ".cursor" / "hooks.json").exists()
    assert not (home / ".config" / "opencode" / "plugins" / "ai-memory.js").exists()
    assert data_dir.exists()  # the data stays unless asked

    again = run_cli_here("uninstall", "--yes", data_dir=data_dir, env=env)
    assert again.returncode == 0 and b"nothing of ai-memory's found" in again.stdout


@pytest.mark.slow  # the real CLI (and a real server) several times
def test_purge_data_is_refused_while_a_server_runs(tmp_path: Path, data_dir: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(HOME=str(home))
    done = run_cli_here("install-mcp", "--client", "cursor", "--apply", data_dir=data_dir, env=env)
    assert done.returncode == 0, done.stderr
    unit = home / ".config" / "systemd" / "user" / "ai-memory.service"
    service = run_cli("service", "install", data_dir=data_dir, env=env)  # no systemd here
    assert service.returncode == 0 and unit.exists(), service.stderr
    proc = ServerProcess(data_dir).start()
    try:
        refused = run_cli("uninstall", "--purge-data", "--yes", data_dir=data_dir, env=env)
        assert refused.returncode == 1
        assert b"refusing to uninstall --purge-data" in refused.stderr
        assert (home / ".cursor" / "mcp.json").exists()  # nothing changed
        assert (data_dir / "db" / "memory.sqlite").exists()
    finally:
        proc.stop()
    dry = run_cli_here("uninstall", "--purge-data", "--dry-run", data_dir=data_dir, env=env)
    assert dry.returncode == 0 and f"would delete {data_dir}".encode() in dry.stdout
    assert f"would remove {unit}".encode() in dry.stdout and unit.exists()
    assert data_dir.exists()
    purged = run_cli("uninstall", "--purge-data", "--yes", data_dir=data_dir, env=env)
    assert purged.returncode == 0, purged.stderr
    assert not data_dir.exists()
    assert not (home / ".cursor" / "mcp.json").exists()
    assert not unit.exists()


def test_json_entries_are_cut_with_their_commas_and_nothing_else() -> None:
    from ai_memory.cli.json_edit import remove_to

    def ours(value: object) -> bool:
        return "ai-memory" in json.dumps(value)

    text = '{\n\t"a" : 1,\n\t"ai-memory": {"x": [1, 2]},\n\t"b": [ "keep",  "ai-memory" ]\n}\n'
    assert remove_to(text, {"a": 1, "b": ["keep", "ai-memory"]}, ours) == (
        '{\n\t"a" : 1,\n\t"b": [ "keep",  "ai-memory" ]\n}\n'
    )
    assert remove_to(text, {"a": 1, "ai-memory": {"x": [1, 2]}, "b": ["keep"]}, ours) == (
        '{\n\t"a" : 1,\n\t"ai-memory": {"x": [1, 2]},\n\t"b": [ "keep" ]\n}\n'
    )
    first = '{"ai-memory": 1, "z": 2}'
    assert remove_to(first, {"z": 2}, ours) == '{"z": 2}'
    assert remove_to(first, {}, ours) == "{}"
    assert remove_to(first, {"z": 3}, ours) is None  # not a deletion: the caller rewrites
    assert remove_to("{not json", {}, ours) is None


def test_purge_data_refuses_a_folder_that_is_not_a_data_dir(tmp_path: Path, data_dir: Path) -> None:
    """A mistyped ``--data-dir`` (``/``, HOME, a project folder) is refused before any change."""
    from ai_memory.cli.uninstall import uninstall
    from ai_memory.core.errors import InvalidInput

    home = tmp_path / "home"
    (home / ".cursor").mkdir(parents=True)
    mcp = home / ".cursor" / "mcp.json"
    mcp.write_text('{"mcpServers": {"ai-memory": {"command": "ai-memory"}}}\n')
    work = tmp_path / "work"
    (work / "src").mkdir(parents=True)
    (work / "src" / "main.py").write_text("print('mine')\n")
    for folder, dry_run in ((work, False), (home, True), (Path("/"), True), (tmp_path, True)):
        with pytest.raises(InvalidInput, match="not an ai-memory data dir"):
            uninstall(home, folder, purge_data=True, dry_run=dry_run)
    assert (work / "src" / "main.py").read_text() == "print('mine')\n"
    assert not (work / "server.lock").exists()
    assert mcp.exists()  # refused before any config changed
    planned = uninstall(home, data_dir, purge_data=True, dry_run=True)
    assert planned.details["purge_data"] == str(data_dir)


@pytest.mark.slow  # the real CLI twice
def test_a_symlinked_config_is_restored_through_its_link(tmp_path: Path, data_dir: Path) -> None:
    """Install followed the link and backed the real file up beside it; uninstall must find
    that backup and write through the link, never delete the user's link."""
    home = tmp_path / "home"
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    real.write_text("{}\n")
    link = home / ".claude" / "settings.json"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    env = clean_env(HOME=str(home))
    done = run_cli_here(
        "install-hooks", "--agent", "claude-code", "--apply", data_dir=data_dir, env=env
    )
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and "agent_entry.py" in real.read_text()
    done = run_cli_here("uninstall", "--yes", data_dir=data_dir, env=env)
    assert done.returncode == 0, done.stderr
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text() == "{}\n"


@pytest.mark.slow  # the real CLI
def test_a_malformed_config_is_named_and_nothing_changes(tmp_path: Path, data_dir: Path) -> None:
    home = tmp_path / "home"
    codex = home / ".codex" / "config.toml"
    codex.parent.mkdir(parents=True)
    broken = b'model = "o3\n\n[mcp_servers.ai-memory]\ncommand = "ai-memory"\n'
    codex.write_bytes(broken)
    cursor = home / ".cursor" / "mcp.json"
    cursor.parent.mkdir(parents=True)
    cursor.write_text('{"mcpServers": {"ai-memory": {"command": "ai-memory"}}}\n')
    done = run_cli_here("uninstall", "--yes", data_dir=data_dir, env=clean_env(HOME=str(home)))
    assert done.returncode == 1, done.stdout
    assert f"{codex} is not valid TOML".encode() in done.stderr
    assert b"Traceback" not in done.stderr
    assert codex.read_bytes() == broken and cursor.exists()
