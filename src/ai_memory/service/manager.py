"""Talking to the service manager: ``systemctl --user`` on Linux, ``launchctl`` on macOS.

Commands run through an injected :data:`Runner`, so the code that decides what to run
is the code under test, and a machine without a user manager is detected by asking it.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ai_memory.core.errors import Unavailable
from ai_memory.service.spec import LAUNCHD_LABEL, UNIT_NAME, Host


@dataclass(frozen=True, slots=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str


Runner = Callable[[Sequence[str]], Completed]


def run_command(argv: Sequence[str]) -> Completed:
    """Run a manager command, bounded; a missing program is an answer, not a crash."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=30)
    except FileNotFoundError as exc:
        return Completed(127, "", f"{argv[0]}: {exc.strerror}")
    except subprocess.TimeoutExpired:
        return Completed(124, "", f"{argv[0]} did not answer within 30 s")
    return Completed(done.returncode, done.stdout, done.stderr)


class Manager(Protocol):
    name: str

    def probe(self) -> str | None:
        """None when the manager answers; else why it cannot be used here."""

    def activate(self, changed: bool) -> None:
        """Enable the service at login and run it; a ``changed`` file is reloaded and
        restarted, an unchanged one only started if it is not running (a no-op)."""

    def deactivate(self) -> None:
        """Stop the service and disable it at login (its file is removed next)."""

    def forget(self) -> None:
        """Tell the manager the file is gone."""

    def control(self, action: str) -> None:
        """start, stop or restart."""

    def state(self) -> dict[str, str]:
        """What the manager says about the service (running, pid, restarts, ...)."""

    def logs_argv(self, lines: int, follow: bool) -> list[str]:
        """The command that shows the service's logs."""


def _first_line(done: Completed) -> str:
    text = (done.stderr or done.stdout).strip()
    return text.splitlines()[0] if text else f"exit status {done.returncode}"


def _checked(run: Runner, argv: list[str]) -> Completed:
    done = run(argv)
    if done.returncode != 0:
        raise Unavailable(f"`{' '.join(argv)}` failed: {_first_line(done)}")
    return done


class Systemd:
    name = "systemd"

    def __init__(self, run: Runner, unit: str = UNIT_NAME) -> None:
        self.run = run
        self.unit = unit

    def _ctl(self, *args: str) -> list[str]:
        return ["systemctl", "--user", *args]

    def probe(self) -> str | None:
        done = self.run(self._ctl("show-environment"))
        if done.returncode == 0:
            return None
        return f"`systemctl --user` cannot reach a user service manager ({_first_line(done)})"

    def activate(self, changed: bool) -> None:
        if changed:
            _checked(self.run, self._ctl("daemon-reload"))
        _checked(self.run, self._ctl("enable", self.unit))
        _checked(self.run, self._ctl("restart" if changed else "start", self.unit))

    def deactivate(self) -> None:
        self.run(self._ctl("disable", "--now", self.unit))

    def forget(self) -> None:
        self.run(self._ctl("daemon-reload"))

    def control(self, action: str) -> None:
        _checked(self.run, self._ctl(action, self.unit))

    def state(self) -> dict[str, str]:
        keys = "ActiveState,SubState,MainPID,NRestarts,UnitFileState,ExecMainStatus"
        done = self.run(self._ctl("show", self.unit, "--property", keys))
        pairs = (line.partition("=") for line in done.stdout.splitlines())
        return {key: value for key, sep, value in pairs if sep}

    def logs_argv(self, lines: int, follow: bool) -> list[str]:
        argv = ["journalctl", "--user", "--unit", self.unit, "--lines", str(lines)]
        return [*argv, "--follow"] if follow else argv


class Launchd:
    name = "launchd"

    def __init__(self, run: Runner, uid: int, plist: Path, log_file: Path) -> None:
        self.run = run
        self.domain = f"gui/{uid}"
        self.target = f"gui/{uid}/{LAUNCHD_LABEL}"
        self.plist = plist
        self.log_file = log_file

    def probe(self) -> str | None:
        done = self.run(["launchctl", "print", self.domain])
        if done.returncode == 0:
            return None
        return f"launchd has no session for this user ({_first_line(done)})"

    def activate(self, changed: bool) -> None:
        loaded = self.run(["launchctl", "print", self.target]).returncode == 0
        if loaded and not changed:
            return
        if loaded:
            self.run(["launchctl", "bootout", self.target])
        _checked(self.run, ["launchctl", "bootstrap", self.domain, str(self.plist)])
        _checked(self.run, ["launchctl", "enable", self.target])

    def deactivate(self) -> None:
        self.run(["launchctl", "bootout", self.target])

    def forget(self) -> None:
        """launchd forgot the agent at bootout."""

    def control(self, action: str) -> None:
        """A stop unloads the agent: the server dies of the SIGTERM it handled, which
        launchd would count as a crash and answer with a restart. It loads again at login."""
        loaded = self.run(["launchctl", "print", self.target]).returncode == 0
        if action == "stop":
            if loaded:
                _checked(self.run, ["launchctl", "bootout", self.target])
        elif not loaded:
            _checked(self.run, ["launchctl", "bootstrap", self.domain, str(self.plist)])
        else:
            kick = ["-k"] if action == "restart" else []
            _checked(self.run, ["launchctl", "kickstart", *kick, self.target])

    def state(self) -> dict[str, str]:
        done = self.run(["launchctl", "print", self.target])
        found: dict[str, str] = {}
        for line in done.stdout.splitlines():
            key, sep, value = line.strip().partition(" = ")
            if sep and key in ("state", "pid", "runs", "last exit code"):
                found.setdefault(key, value)
        return found

    def logs_argv(self, lines: int, follow: bool) -> list[str]:
        argv = ["tail", "-n", str(lines)]
        return [*argv, "-f", str(self.log_file)] if follow else [*argv, str(self.log_file)]


def manager_for(host: Host, plist: Path, log_file: Path, run: Runner) -> Manager | None:
    if host.platform == "linux":
        return Systemd(run)
    if host.platform == "macos":
        return Launchd(run, host.uid, plist, log_file)
    return None
