"""The service commands as functions: install, uninstall, start/stop/restart, status.

The CLI only prints what these return. Without a service manager (a container, WSL
without systemd) every command that needs one raises :class:`NoServiceManager`,
whose message names the one command that serves in the foreground instead.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.core.errors import NoServiceManager, NotInitialised
from ai_memory.service.digest import FileState, check
from ai_memory.service.files import Written, read_unit, remove_unit, require_removable, write_unit
from ai_memory.service.manager import Manager, Runner, manager_for, run_command
from ai_memory.service.render import render
from ai_memory.service.spec import Host, ServiceSpec, foreground_command, unit_path


@dataclass(frozen=True, slots=True)
class Installed:
    path: Path
    written: Written
    not_started: str | None  # why the service could not be started here, if it was not


@dataclass(frozen=True, slots=True)
class ServiceStatus:
    path: Path
    file: str  # not installed, current, stale, edited
    manager: dict[str, str]
    unavailable: str | None


@dataclass
class Service:
    """The service of one data dir on one host."""

    host: Host
    data_dir: Path
    run: Runner = field(default=run_command)

    @property
    def spec(self) -> ServiceSpec:
        if self.host.platform is None:
            raise self.no_manager("this operating system has neither systemd nor launchd")
        return ServiceSpec(self.host.platform, self.host.interpreter, self.data_dir)

    @property
    def path(self) -> Path:
        return unit_path(self.spec.platform, self.host.env, self.host.home)

    @property
    def foreground(self) -> str:
        return foreground_command(self.host.interpreter, self.data_dir)

    def no_manager(self, reason: str) -> NoServiceManager:
        return NoServiceManager(
            f"no service manager is available here: {reason}. "
            f"Run the server in the foreground instead: {self.foreground}"
        )

    def unavailable(self) -> tuple[Manager | None, str | None]:
        """The manager, or why there is none to use."""
        manager = manager_for(self.host, self.path, self.spec.log_file, self.run)
        if manager is None:
            return None, "this operating system has neither systemd nor launchd"
        reason = manager.probe()
        return (None, reason) if reason else (manager, None)

    def manager(self) -> Manager:
        manager, reason = self.unavailable()
        if manager is None:
            raise self.no_manager(reason or "unknown")
        return manager

    def install(self, *, force: bool = False) -> Installed:
        """Write the file (a second install finds it unchanged), then enable and start it."""
        if not self.spec.config_file.exists():
            raise NotInitialised(f"{self.data_dir} is not initialised; run `ai-memory init` first")
        written = write_unit(self.path, render(self.spec), force=force)
        manager, reason = self.unavailable()
        if manager is None:
            return Installed(self.path, written, reason)
        manager.activate(changed=written is not Written.UNCHANGED)
        return Installed(self.path, written, None)

    def uninstall(self) -> bool:
        """Stop and remove the service; False when there was nothing to remove."""
        if not require_removable(self.path):
            return False
        manager, _ = self.unavailable()
        if manager is not None:
            manager.deactivate()
        remove_unit(self.path)
        if manager is not None:
            manager.forget()
        return True

    def control(self, action: str) -> None:
        self.manager().control(action)

    def status(self) -> ServiceStatus:
        manager, reason = self.unavailable()
        state = manager.state() if manager is not None else {}
        return ServiceStatus(self.path, self.file_state(), state, reason)

    def file_state(self) -> str:
        """Whether the installed file is exactly what this install would write."""
        current = read_unit(self.path)
        if current is None:
            return "not installed"
        if current == render(self.spec):
            return "current"
        return "stale" if check(current) is FileState.INTACT else "edited"

    def logs_argv(self, lines: int, follow: bool) -> list[str]:
        return self.manager().logs_argv(lines, follow)
