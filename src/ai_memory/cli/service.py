"""``ai-memory service``: the server as a per-user service that starts at login."""

from __future__ import annotations

import subprocess
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ai_memory.cli.options import DataDir, Json, load_config
from ai_memory.cli.output import emit_json, err, out

if TYPE_CHECKING:
    from ai_memory.config import Config
    from ai_memory.service.control import Installed, Service

service_app = typer.Typer(
    name="service",
    help="Run the server as a per-user service: a systemd user unit on Linux, "
    "a launchd agent on macOS. Restarted on failure, started at login.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    app.add_typer(service_app)


def service_for(config: Config) -> Service:
    from ai_memory.service.control import Service
    from ai_memory.service.spec import Host

    return Service(Host.current(), config.data_dir)


def say(text: str) -> None:
    out.print(text, markup=False, highlight=False, soft_wrap=True)


@service_app.command()
def install(
    data_dir: DataDir = None,
    force: Annotated[
        bool, typer.Option("--force", help="Replace a service file changed by hand.")
    ] = False,
) -> None:
    """Write the service file, enable it at login and start it; a second run changes nothing."""
    config = load_config(data_dir)
    installed = install_service(config, force=force)
    if installed.not_started is None:
        report_health(config)


def install_service(config: Config, *, force: bool = False) -> Installed:
    from ai_memory.service.files import Written

    service = service_for(config)
    installed = service.install(force=force)
    if installed.written is Written.UNCHANGED:
        say(f"{installed.path} is already installed and unchanged.")
    else:
        say(f"{installed.written.value} {installed.path}")
    if installed.not_started is not None:
        err.print(
            f"note: the service is not started: no service manager is available here "
            f"({installed.not_started}). Run the server in the foreground instead: "
            f"{service.foreground}",
            markup=False,
            highlight=False,
        )
    return installed


def offer_service(config: Config, wanted: bool | None, url: str) -> None:
    """``setup``'s service step: install and start it, then wait until it answers."""
    if wanted is None:
        wanted = sys.stdin.isatty() and typer.confirm(
            "Install the always-on service (starts the server at login, restarts it "
            "after a crash)?",
            default=True,
        )
    if not wanted:
        return
    if install_service(config).not_started is None:
        report_health(config, url)


@service_app.command()
def uninstall(data_dir: DataDir = None) -> None:
    """Stop the service and remove its file, if it is the unchanged file ai-memory wrote."""
    service = service_for(load_config(data_dir))
    if service.uninstall():
        say(f"removed {service.path}")
    else:
        say(f"{service.path} is not installed; nothing to do.")


@service_app.command()
def start(data_dir: DataDir = None) -> None:
    """Start the service and wait until the server answers."""
    _control(load_config(data_dir), "start")


@service_app.command()
def stop(data_dir: DataDir = None) -> None:
    """Stop the service: accepted writes are drained and checkpointed first."""
    _control(load_config(data_dir), "stop")


@service_app.command()
def restart(data_dir: DataDir = None) -> None:
    """Restart the service (after an upgrade, to run the new code)."""
    _control(load_config(data_dir), "restart")


def _control(config: Config, action: str) -> None:
    service_for(config).control(action)
    say(f"{action} requested")
    if action != "stop":
        report_health(config)


def report_health(config: Config, url: str | None = None) -> None:
    """Wait for ``/healthz``; a service that never answers is a failure, with where to look."""
    from ai_memory.service.health import wait_healthy

    url = url or config.server.url
    version = wait_healthy(url)
    if version is None:
        raise typer.Exit(_fail(f"the server did not answer on {url}/healthz within 30 s"))
    say(f"the server answers on {url} (version {version})")


def _fail(message: str) -> int:
    err.print(f"error: {message}; see `ai-memory service logs`", markup=False, highlight=False)
    return 1


@service_app.command()
def status(data_dir: DataDir = None, as_json: Json = False) -> None:
    """Is the service installed, current, running? Exits 1 if no service manager runs."""
    service = service_for(load_config(data_dir))
    state = service.status()
    if as_json:
        emit_json(
            {
                "path": str(state.path),
                "file": state.file,
                "manager": state.manager,
                "unavailable": state.unavailable,
            }
        )
    else:
        say(f"service file: {state.file} ({state.path})")
        for key, value in state.manager.items():
            say(f"  {key}: {value}")
    if state.unavailable is not None:
        raise service.no_manager(state.unavailable)


@service_app.command()
def logs(
    data_dir: DataDir = None,
    lines: Annotated[int, typer.Option("--lines", "-n", min=1, max=100_000)] = 100,
    follow: Annotated[bool, typer.Option("--follow", "-f", help="Keep printing.")] = False,
) -> None:
    """The service's logs (journald or launchd's log); else the data dir's server log."""
    config = load_config(data_dir)
    service = service_for(config)
    manager, reason = service.unavailable()
    if manager is not None:
        raise typer.Exit(subprocess.run(manager.logs_argv(lines, follow)).returncode)
    log_file = config.logs_dir / "server.log"
    err.print(
        f"note: no service manager is available here ({reason}); showing {log_file}",
        markup=False,
        highlight=False,
    )
    for line in _tail(log_file, lines):
        say(line)


def _tail(path: Path, lines: int) -> list[str]:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return [line.rstrip("\n") for line in deque(handle, maxlen=lines)]
    except FileNotFoundError:
        return []
