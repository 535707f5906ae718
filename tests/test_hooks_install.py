"""install-hooks / uninstall-hooks on real settings files with foreign entries."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import clean_env, run_cli

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
    return run_cli(*args, data_dir=data_dir, env=clean_env(HOME=str(home)))


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
