"""Options shared by every command, and resolving them into a config, a client, a scope.

Importing this module costs Typer alone: the config (pydantic), the HTTP client
(httpx) and the project resolution are loaded by the functions that use them,
so a command loads only what it needs (``--help`` needs none of them).
"""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from ai_memory.cli.client import ApiClient
    from ai_memory.config import Config
    from ai_memory.core.identity import Scope

DataDir = Annotated[
    Path | None,
    typer.Option("--data-dir", help="Data directory (default: $AI_MEMORY_DATA_DIR, else XDG)."),
]
ServerUrl = Annotated[
    str | None, typer.Option("--server", help="Server URL (default: server.url from config).")
]
Workspace = Annotated[
    str | None, typer.Option("--workspace", "-w", help="Workspace (default: from the checkout).")
]
Project = Annotated[
    str | None, typer.Option("--project", "-p", help="Project (default: from the checkout).")
]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]


def load_config(data_dir: Path | None) -> Config:
    from ai_memory.config import Config

    return Config.load(data_dir, os.environ)


def load_config_owning(data_dir: Path | None) -> Config:
    """The config of a command that writes the data dir itself: all it creates stays private."""
    from ai_memory.maintenance.modes import private_umask

    private_umask()
    return load_config(data_dir)


def client_for(config: Config, server: str | None) -> ApiClient:
    """The same server and token the hook client would use from this environment."""
    from ai_memory import locate
    from ai_memory.cli.client import ApiClient

    signed_in = locate.credential(os.environ)
    url = (
        server
        or os.environ.get("AI_MEMORY_SERVER_URL")
        or (signed_in[0] if signed_in else "")
        or running_url(config.data_dir)
        or config.server.url
    )
    return ApiClient(url, locate.token(config.data_dir, os.environ))


def running_url(data_dir: Path) -> str | None:
    """The address of the server holding ``data_dir``'s lock, as ``serve --bind`` recorded it.

    ``server.url`` in config.toml names the default port; a server started with
    ``--bind`` elsewhere is found through its lock, so the commands on its own
    machine reach it rather than refuse ("a server owns …; stop it first").
    None when no server holds the lock (a stale file names no live server).
    """
    import fcntl
    import json

    try:
        fd = os.open(data_dir / "server.lock", os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            bind = _recorded_bind(fd, json.loads)
        else:
            return None  # nobody holds it: the file is what a stopped server left behind
    finally:
        os.close(fd)
    return _loopback_url(bind) if bind else None


def _recorded_bind(fd: int, parse: Any) -> str | None:
    try:
        info = parse(os.read(fd, 4096) or b"{}")
    except ValueError:
        return None
    bind = info.get("bind") if isinstance(info, dict) else None
    return bind if isinstance(bind, str) and ":" in bind else None


def _loopback_url(bind: str) -> str:
    """``host:port`` as a URL this machine can reach (a wildcard host means loopback)."""
    host, _, port = bind.rpartition(":")
    host = host.strip("[]")
    if host in ("", "0.0.0.0"):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def scope_for(workspace: str | None, project: str | None) -> Scope:
    """Explicit names win; otherwise the project of the current directory."""
    from ai_memory.core.identity import Scope
    from ai_memory.hookclient.resolve import resolve_project

    if project:
        return Scope.of(workspace, project)
    identity = resolve_project(Path.cwd())
    return Scope.of(workspace or identity.workspace, identity.project)


def quiet_flags(command: Any) -> Any:
    """On/off flags take no value, so their help shows no ``<bool>`` type; a repeatable
    option shows the type of one value; choices and other types stay. Walks every
    subcommand of ``command`` (a built click group)."""
    params = list(getattr(command, "params", []))
    if hasattr(command, "get_help_option"):  # built once and cached by the command
        params.append(command.get_help_option(SimpleNamespace(help_option_names=["--help"])))
    for param in params:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
        elif getattr(param, "multiple", False) and param.metavar is None:
            param.metavar = "<str>"  # one value per use: the option repeats, not a list
    for sub in getattr(command, "commands", {}).values():
        quiet_flags(sub)
    return command
