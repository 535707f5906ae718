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
        or config.server.url
    )
    return ApiClient(url, locate.token(config.data_dir, os.environ))


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
