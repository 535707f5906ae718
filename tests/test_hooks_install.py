"""install-hooks / uninstall-hooks on real settings files with foreign entries."""

from __future__ import annotations

import json
import stat
import subprocess
from pathlib import Path
from typing import Any

from ai_memory.cli import hook_install
from ai_memory.mcp import install as mcp_install
from tests.conftest import clean_env, run_cli_here

FOREIGN: dict[str, Any] = {
    "model": "opus",
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./guard.sh"}]}
        ],
        "SessionStart": [
            {"matcher": "", "hooks": [{"type": "command", "command": "echo hello", "timeout": 5}]}
        ],
    },
}


def install(home: Path, data_dir: Path, *args: str) -> Any:
    return run_cli_here(*args, data_dir=data_dir, env=clean_env(HOME=str(home)))


def own_commands(settings: dict[str, Any], event: str) -> list[str]:
    return [
        h["command"]
        for group in settings["hooks"].get(event, [])
        for h in group["hooks"]
        if " hook --agent " in h["command"]
    ]


def test_install_twice_keeps_foreign_hooks_and_adds_ours_once(
    tmp_path: Path, data_dir: Path
) -> None:
    home = tmp_path / "home"
    settings_file = home / ".claude" / "settings.json"
    settings_file.parent.mkdir(parents=True)
    settings_file.write_text(json.dumps(FOREIGN))

    preview = install(home, data_dir, "install-hooks", "--agent", "claude-code")
    assert preview.returncode == 0, preview.stderr
    assert b"--apply" in preview.stdout
    assert json.loads(settings_file.read_text()) == FOREIGN  # only shown, not written

    for _ in range(2):
        result = install(home, data_dir, "install-hooks", "--agent", "claude-code", "--apply")
        assert result.returncode == 0, result.stderr
    settings = json.loads(settings_file.read_text())
    assert settings["model"] == "opus"
    assert settings["hooks"]["PreToolUse"] == FOREIGN["hooks"]["PreToolUse"]
    assert FOREIGN["hooks"]["SessionStart"][0] in settings["hooks"]["SessionStart"]
    for event in ("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"):
        commands = own_commands(settings, event)
        assert len(commands) == 1, (event, commands)
        assert f"--agent claude-code --event {event}" in commands[0]
    assert b"already up to date" in result.stdout
    assert list(settings_file.parent.glob("settings.json.bak-*"))

    removed = install(home, data_dir, "uninstall-hooks", "--agent", "claude-code", "--apply")
    assert removed.returncode == 0, removed.stderr
    assert json.loads(settings_file.read_text()) == FOREIGN


def test_gemini_hooks_use_milliseconds_and_codex_gets_its_own_file(
    tmp_path: Path, data_dir: Path
) -> None:
    home = tmp_path / "home"
    for agent in ("gemini", "codex"):
        result = install(home, data_dir, "install-hooks", "--agent", agent, "--apply")
        assert result.returncode == 0, result.stderr
    gemini = json.loads((home / ".gemini" / "settings.json").read_text())
    assert gemini["hooks"]["BeforeAgent"][0]["hooks"][0]["timeout"] == 5000
    assert own_commands(gemini, "AfterTool")
    codex = json.loads((home / ".codex" / "hooks.json").read_text())
    assert own_commands(codex, "UserPromptSubmit")


def test_a_broken_settings_file_is_refused_untouched(tmp_path: Path, data_dir: Path) -> None:
    home = tmp_path / "home"
    broken = home / ".claude" / "settings.json"
    broken.parent.mkdir(parents=True)
    broken.write_text("{not json")
    result = install(home, data_dir, "install-hooks", "--agent", "claude-code", "--apply")
    assert result.returncode == 1
    assert b"not valid JSON" in result.stderr
    assert broken.read_text() == "{not json"
    unknown = install(home, data_dir, "install-hooks", "--agent", "vim", "--apply")
    assert unknown.returncode == 1 and b"agent must be one of" in unknown.stderr


def test_a_program_path_needing_quotes_installs_once_and_runs_in_a_shell(tmp_path: Path) -> None:
    tools = tmp_path / "My Tools"
    tools.mkdir()
    program = tools / "ai-memory"
    program.write_text('#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n')
    program.chmod(0o755)
    data = tmp_path / "data $HOME 'x'"
    once = hook_install.install(FOREIGN, "claude-code", data, str(program))
    twice = hook_install.install(once, "claude-code", data, str(program))
    assert twice == once
    assert len(own_commands(twice, "Stop")) == 1
    command = own_commands(twice, "Stop")[0]
    ran = subprocess.run(["sh", "-c", command], capture_output=True, check=True, text=True)
    assert ran.stdout.splitlines() == [
        "hook", "--agent", "claude-code", "--event", "Stop", "--data-dir", str(data)
    ]  # fmt: skip
    assert hook_install.uninstall(twice, "claude-code") == FOREIGN


def test_rewriting_settings_keeps_their_mode_their_symlink_and_every_backup(
    tmp_path: Path,
) -> None:
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text('{"env": {"API_KEY": "k"}}')
    real.chmod(0o600)
    link = tmp_path / "settings.json"
    link.symlink_to(real)
    backups = [hook_install.save(link, f'{{"n": {n}}}\n') for n in range(3)]
    assert link.is_symlink() and json.loads(real.read_text()) == {"n": 2}
    assert stat.S_IMODE(real.stat().st_mode) == 0o600
    assert len({b for b in backups if b is not None}) == 3  # same second, three backups
    kept = sorted(b.read_text() for b in backups if b is not None)
    assert kept == ['{"env": {"API_KEY": "k"}}', '{"n": 0}\n', '{"n": 1}\n']
    assert all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in backups if b is not None)
    fresh = tmp_path / "new" / "hooks.json"
    hook_install.save(fresh, "{}\n")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    assert not list(real.parent.glob(".*tmp*"))


def test_mcp_install_writes_through_the_same_helper(tmp_path: Path) -> None:
    path = tmp_path / ".claude.json"
    path.write_text('{"oauth": "secret"}')
    path.chmod(0o600)
    launch = mcp_install.Launch(["ai-memory", "mcp"], "http://127.0.0.1:1")
    change = mcp_install.plan("claude-code", "bridge", launch, path)
    backup = mcp_install.apply(change)
    assert backup is not None and backup.read_text() == '{"oauth": "secret"}'
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(path.read_text())["mcpServers"]["ai-memory"]["command"] == "ai-memory"
