"""Rendering the service files: golden files for both platforms, escaping, the digest line."""

from __future__ import annotations

import os
import plistlib
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ai_memory.core.errors import InvalidInput
from ai_memory.service.digest import FileState, check, seal
from ai_memory.service.render import render, systemd_quote
from ai_memory.service.spec import ServiceSpec, foreground_command, unit_path

GOLDEN = Path(__file__).parent / "golden"
PYTHON = Path("/opt/ai-memory/bin/python3")
DATA = Path("/home/ada/.local/share/ai-memory")


@pytest.mark.parametrize(
    ("platform", "golden"),
    [("linux", "ai-memory.service"), ("macos", "local.ai-memory.server.plist")],
)
def test_each_platform_renders_its_golden_file(platform: str, golden: str) -> None:
    text = render(ServiceSpec(platform, PYTHON, DATA))  # type: ignore[arg-type]
    assert text == (GOLDEN / golden).read_text(encoding="utf-8")
    assert check(text) is FileState.INTACT


def test_the_launch_agent_is_a_valid_property_list() -> None:
    agent = plistlib.loads(render(ServiceSpec("macos", PYTHON, DATA)).encode())
    assert agent["ProgramArguments"] == [
        str(PYTHON),
        "-m",
        "ai_memory",
        "serve",
        "--data-dir",
        str(DATA),
    ]
    assert agent["KeepAlive"] == {"SuccessfulExit": False}  # restarted after a crash
    assert agent["RunAtLoad"] is True
    assert agent["StandardErrorPath"] == str(DATA / "logs" / "launchd.log")


def test_awkward_paths_are_escaped_for_each_format() -> None:
    data = Path("/home/ada/My Memory/100%/$HOME--x & <y>")
    unit = render(ServiceSpec("linux", PYTHON, data))
    exec_start = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    assert exec_start.endswith('--data-dir "/home/ada/My Memory/100%%/$$HOME--x & <y>"')
    assert "WorkingDirectory=/home/ada/My Memory/100%%/$HOME--x & <y>\n" in unit
    agent = render(ServiceSpec("macos", PYTHON, data))
    assert plistlib.loads(agent.encode())["WorkingDirectory"] == str(data)
    assert systemd_quote('say "hi"\\') == '"say \\"hi\\"\\\\"'
    with pytest.raises(InvalidInput, match="line break"):
        render(ServiceSpec("linux", PYTHON, Path("/tmp/two\nlines")))


def test_the_digest_tells_ours_from_edited_and_foreign() -> None:
    text = render(ServiceSpec("linux", PYTHON, DATA))
    assert check(text.replace("RestartSec=5", "RestartSec=1")) is FileState.EDITED
    assert check(text + "# a note\n") is FileState.EDITED
    foreign = "[Service]\nExecStart=/usr/bin/true\n"
    assert check(foreign) is FileState.FOREIGN
    assert seal(text) == text  # sealing is stable: the digest line is not hashed
    with pytest.raises(ValueError):
        seal(foreign)


def test_unit_paths_follow_xdg_on_linux_and_launch_agents_on_macos(tmp_path: Path) -> None:
    home = tmp_path / "home"
    xdg = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    assert unit_path("linux", xdg, home) == tmp_path / "xdg/systemd/user/ai-memory.service"
    assert unit_path("linux", {}, home) == home / ".config/systemd/user/ai-memory.service"
    relative = {"XDG_CONFIG_HOME": "relative/dir"}  # not absolute: ignored, as the spec says
    assert unit_path("linux", relative, home) == home / ".config/systemd/user/ai-memory.service"
    assert (
        unit_path("macos", xdg, home) == home / "Library/LaunchAgents/local.ai-memory.server.plist"
    )


def test_the_foreground_command_serves_the_same_data_dir(tmp_path: Path) -> None:
    command = shlex.split(foreground_command(Path(sys.executable), tmp_path / "my data"))
    assert command[-3:] == ["serve", "--data-dir", str(tmp_path / "my data")]


def _verify_env(tmp_path: Path) -> dict[str, str]:
    runtime_dir = tmp_path / "runtime"
    runtime_dir.mkdir(mode=0o700)
    return {**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir)}


@pytest.mark.skipif(
    shutil.which("systemd-analyze") is None,
    reason="systemd-analyze is not installed (apt-get install systemd provides it)",
)
def test_systemd_analyze_verifies_the_rendered_unit(data_dir: Path, tmp_path: Path) -> None:
    folder = tmp_path / "units"
    folder.mkdir()
    unit = folder / "ai-memory.service"
    unit.write_text(render(ServiceSpec("linux", Path(sys.executable), data_dir)))
    done = subprocess.run(
        ["systemd-analyze", "--user", "verify", str(unit)],
        capture_output=True,
        text=True,
        env=_verify_env(tmp_path),
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    # Warnings (an unknown key, a bad path) do not fail verify: none may appear.
    assert str(unit) not in done.stderr, done.stderr
