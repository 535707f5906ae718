"""Installing and removing the service into a temporary home, on a host without a manager.

This machine has ``systemctl`` but no user service manager (a container), which is the
path most worth proving for real: files are written and removed exactly, and every
command that needs a manager says so and names the foreground command instead.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ai_memory.core.errors import NoServiceManager, ServiceFileEdited
from ai_memory.service.control import Service
from ai_memory.service.files import Written
from ai_memory.service.manager import run_command
from ai_memory.service.spec import Host
from tests.conftest import ServerProcess, clean_env, run_cli, run_cli_here


def no_user_manager() -> bool:
    return run_command(["systemctl", "--user", "show-environment"]).returncode != 0


pytestmark = pytest.mark.skipif(
    sys.platform != "linux" or not no_user_manager(),
    reason="these tests prove the no-service-manager path; this host runs a user manager",
)


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A private HOME and XDG_CONFIG_HOME: the real ~/.config is never touched."""
    (tmp_path / "home").mkdir()
    return clean_env(HOME=str(tmp_path / "home"), XDG_CONFIG_HOME=str(tmp_path / "config"))


def unit_file(tmp_path: Path) -> Path:
    return tmp_path / "config" / "systemd" / "user" / "ai-memory.service"


def test_install_writes_the_unit_once_and_uninstall_removes_it(
    data_dir: Path, tmp_path: Path, home: dict[str, str]
) -> None:
    first = run_cli("service", "install", data_dir=data_dir, env=home)
    assert first.returncode == 0, first.stderr
    unit = unit_file(tmp_path)
    assert f"created {unit}".encode() in first.stdout
    assert b"no service manager is available here" in first.stderr
    assert f"serve --data-dir {data_dir}".encode() in first.stderr
    text = unit.read_text()
    assert f"ExecStart={sys.executable} -m ai_memory serve --data-dir {data_dir}" in text
    assert f"AssertPathExists={data_dir / 'config.toml'}" in text

    stamp = unit.stat().st_mtime_ns
    again = run_cli_here("service", "install", data_dir=data_dir, env=home)
    assert again.returncode == 0, again.stderr
    assert b"already installed and unchanged" in again.stdout
    assert unit.read_text() == text and unit.stat().st_mtime_ns == stamp

    removed = run_cli_here("service", "uninstall", data_dir=data_dir, env=home)
    assert removed.returncode == 0, removed.stderr
    assert not unit.exists()
    nothing = run_cli_here("service", "uninstall", data_dir=data_dir, env=home)
    assert nothing.returncode == 0 and b"not installed; nothing to do" in nothing.stdout


def test_a_unit_edited_by_hand_is_left_alone(
    data_dir: Path, tmp_path: Path, home: dict[str, str]
) -> None:
    assert run_cli_here("service", "install", data_dir=data_dir, env=home).returncode == 0
    unit = unit_file(tmp_path)
    edited = unit.read_text().replace("RestartSec=5", "RestartSec=30")
    unit.write_text(edited)
    refused = run_cli_here("service", "uninstall", data_dir=data_dir, env=home)
    assert refused.returncode == 1
    assert b"was changed since ai-memory wrote it" in refused.stderr
    assert f"rm {unit}".encode() in refused.stderr
    assert unit.read_text() == edited
    kept = run_cli_here("service", "install", data_dir=data_dir, env=home)
    assert kept.returncode == 1 and b"--force" in kept.stderr
    assert unit.read_text() == edited
    forced = run_cli_here("service", "install", "--force", data_dir=data_dir, env=home)
    assert forced.returncode == 0 and f"replaced {unit}".encode() in forced.stdout
    assert run_cli_here("service", "uninstall", data_dir=data_dir, env=home).returncode == 0
    assert not unit.exists()


def test_a_foreign_unit_of_the_same_name_is_never_overwritten(
    data_dir: Path, tmp_path: Path, home: dict[str, str]
) -> None:
    unit = unit_file(tmp_path)
    unit.parent.mkdir(parents=True)
    unit.write_text("[Service]\nExecStart=/usr/local/bin/my-own-memory\n")
    refused = run_cli_here("service", "install", data_dir=data_dir, env=home)
    assert refused.returncode == 1 and b"was not written by ai-memory" in refused.stderr
    gone = run_cli_here("service", "uninstall", data_dir=data_dir, env=home)
    assert gone.returncode == 1
    assert unit.read_text() == "[Service]\nExecStart=/usr/local/bin/my-own-memory\n"


def test_a_unit_for_another_install_is_replaced(
    data_dir: Path, tmp_path: Path, home: dict[str, str]
) -> None:
    """An upgrade into a new virtualenv: the old unit is ours and unchanged, so it is updated."""
    env = {**home}
    old_host = Host("linux", env, Path("/old/venv/bin/python3"), 1000)
    Service(old_host, data_dir).install()
    unit = unit_file(tmp_path)
    assert "/old/venv/bin/python3" in unit.read_text()
    status = run_cli_here(
        "status", data_dir=data_dir, env=home
    )  # no server: still says what it can
    assert (
        b"service: stale" in status.stdout and b"run `ai-memory service install`" in status.stdout
    )
    done = run_cli_here("service", "install", data_dir=data_dir, env=home)
    assert done.returncode == 0 and f"replaced {unit}".encode() in done.stdout
    assert sys.executable in unit.read_text()


@pytest.mark.parametrize("command", ["start", "stop", "restart", "status"])
def test_commands_that_need_a_manager_say_so_and_print_the_foreground_command(
    data_dir: Path, home: dict[str, str], command: str
) -> None:
    done = run_cli_here("service", command, data_dir=data_dir, env=home)
    assert done.returncode == 1
    stderr = b" ".join(done.stderr.split())  # the message may wrap
    assert b"no service manager is available here" in stderr
    assert b"systemctl --user" in stderr
    assert f"serve --data-dir {data_dir}".encode() in stderr
    assert b"Traceback" not in done.stderr


def test_logs_fall_back_to_the_data_dirs_log(data_dir: Path, home: dict[str, str]) -> None:
    (data_dir / "logs" / "server.log").write_text("".join(f"line {n}\n" for n in range(50)))
    done = run_cli_here("service", "logs", "--lines", "3", data_dir=data_dir, env=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.decode().splitlines() == ["line 47", "line 48", "line 49"]
    assert b"no service manager is available here" in done.stderr


def test_the_launch_agent_installs_into_a_temporary_home_on_any_os(
    data_dir: Path, tmp_path: Path
) -> None:
    """A macOS host, injected: launchctl is missing here, so the agent is written, not loaded."""
    home = tmp_path / "mac"
    host = Host("macos", {"HOME": str(home)}, Path(sys.executable), 501)
    service = Service(host, data_dir)
    installed = service.install()
    plist = home / "Library" / "LaunchAgents" / "local.ai-memory.server.plist"
    assert installed.path == plist and installed.written is Written.CREATED
    assert installed.not_started is not None and "launchd" in installed.not_started
    assert service.install().written is Written.UNCHANGED
    assert service.file_state() == "current"
    with pytest.raises(NoServiceManager, match="serve --data-dir"):
        service.control("start")
    plist.write_text(plist.read_text().replace("<integer>10</integer>", "<integer>1</integer>"))
    assert service.file_state() == "edited"
    with pytest.raises(ServiceFileEdited):
        service.uninstall()
    service.install(force=True)
    assert service.uninstall() is True
    assert not plist.exists()


def test_an_unsupported_os_names_the_foreground_command(data_dir: Path) -> None:
    service = Service(Host(None, {}, Path(sys.executable), 0), data_dir)
    with pytest.raises(NoServiceManager, match=r"neither systemd nor launchd.*serve --data-dir"):
        service.install()


def test_setup_with_service_installs_it_and_says_it_cannot_start_it_here(
    server: ServerProcess, tmp_path: Path, home: dict[str, str]
) -> None:
    checkout = tmp_path / "work"
    checkout.mkdir()
    (checkout / ".ai-memory.toml").write_text('project = "set-up"\n')
    args = ("setup", "--agent", "claude-code", "--server", server.url)
    done = run_cli_here(*args, "--service", data_dir=server.data_dir, env=home, cwd=checkout)
    assert done.returncode == 0, done.stderr
    unit = unit_file(tmp_path)
    assert f"created {unit}".encode() in done.stdout
    assert b"no service manager is available here" in done.stderr
    assert b"MCP memory_status answered from default/set-up" in done.stdout  # self-check ran
    unit.unlink()
    skipped = run_cli_here(*args, "--no-service", data_dir=server.data_dir, env=home, cwd=checkout)
    assert skipped.returncode == 0, skipped.stderr
    assert not unit.exists()


def test_install_refuses_a_data_dir_that_was_never_initialised(
    tmp_path: Path, home: dict[str, str]
) -> None:
    done = run_cli_here("service", "install", data_dir=tmp_path / "nothing-here", env=home)
    assert done.returncode == 1 and b"run `ai-memory init` first" in done.stderr
    assert not unit_file(tmp_path).exists()
