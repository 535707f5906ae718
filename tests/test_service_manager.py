"""What the service commands ask of systemd and launchd, on a host where they answer.

This machine has no user service manager, so ``systemctl`` and ``launchctl`` are stood
in for by a recorder that answers like them; everything else (rendering, the files in a
temporary home, the decisions) is the real code. The recorder stands for the operating
system, not for ai-memory.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from ai_memory.core.errors import Unavailable
from ai_memory.service.control import Service
from ai_memory.service.manager import Completed
from ai_memory.service.spec import Host


class Recorder:
    """Answers every command with success, except those told to fail (a word of the
    command, or the whole command line); keeps what ran."""

    def __init__(self, failing: Sequence[str] = ()) -> None:
        self.calls: list[list[str]] = []
        self.failing = set(failing)

    def __call__(self, argv: Sequence[str]) -> Completed:
        self.calls.append(list(argv))
        if " ".join(argv) in self.failing or any(word in self.failing for word in argv):
            return Completed(1, "", f"{argv[0]}: refused\n")
        return Completed(0, "ActiveState=active\nSubState=running\nMainPID=4242\n", "")

    def commands(self, program: str) -> list[str]:
        return [" ".join(c[1:]) for c in self.calls if c[0] == program]


def linux(tmp_path: Path, data_dir: Path, run: Recorder) -> Service:
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    return Service(Host("linux", env, Path(sys.executable), 1000), data_dir, run)


def test_systemd_install_enables_and_starts_and_a_second_install_only_starts(
    data_dir: Path, tmp_path: Path
) -> None:
    run = Recorder()
    service = linux(tmp_path, data_dir, run)
    assert service.install().not_started is None
    unit = "ai-memory.service"
    assert run.commands("systemctl") == [
        "--user show-environment",
        "--user daemon-reload",
        f"--user enable {unit}",
        f"--user restart {unit}",
    ]
    run.calls.clear()
    service.install()
    # Nothing changed: no reload, no restart of a running server.
    assert run.commands("systemctl") == [
        "--user show-environment",
        f"--user enable {unit}",
        f"--user start {unit}",
    ]
    assert service.status().manager["MainPID"] == "4242"
    run.calls.clear()
    assert service.uninstall() is True
    assert run.commands("systemctl") == [
        "--user show-environment",
        f"--user disable --now {unit}",
        "--user daemon-reload",
    ]
    assert not service.path.exists()


def test_systemd_logs_come_from_the_journal(data_dir: Path, tmp_path: Path) -> None:
    service = linux(tmp_path, data_dir, Recorder())
    assert service.logs_argv(20, True) == [
        "journalctl",
        "--user",
        "--unit",
        "ai-memory.service",
        "--lines",
        "20",
        "--follow",
    ]


def test_a_refusing_manager_is_a_clear_error(data_dir: Path, tmp_path: Path) -> None:
    service = linux(tmp_path, data_dir, Recorder(failing=["enable"]))
    with pytest.raises(Unavailable, match=r"systemctl --user enable ai-memory\.service` failed"):
        service.install()


def test_launchd_bootstraps_the_agent_and_stops_it_by_unloading(
    data_dir: Path, tmp_path: Path
) -> None:
    run = Recorder(failing=["launchctl print gui/501/local.ai-memory.server"])  # not loaded
    host = Host("macos", {"HOME": str(tmp_path / "mac")}, Path(sys.executable), 501)
    service = Service(host, data_dir, run)
    assert service.install().not_started is None
    plist = str(service.path)
    target = "gui/501/local.ai-memory.server"
    assert run.commands("launchctl") == [
        "print gui/501",
        f"print {target}",
        f"bootstrap gui/501 {plist}",
        f"enable {target}",
    ]
    loaded = Recorder()
    service = Service(host, data_dir, loaded)
    service.install()  # unchanged and loaded: nothing to do
    assert loaded.commands("launchctl") == ["print gui/501", f"print {target}"]
    for action in ("restart", "stop"):
        loaded.calls.clear()
        service.control(action)
        expected = f"kickstart -k {target}" if action == "restart" else f"bootout {target}"
        assert loaded.commands("launchctl")[-1] == expected
    assert service.logs_argv(5, False) == ["tail", "-n", "5", str(data_dir / "logs/launchd.log")]
