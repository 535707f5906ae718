"""``ai-memory serve``: the server in the foreground, loopback unless told otherwise.

The command as Typer shows and parses it; :mod:`ai_memory.cli.serving` runs it (and
runs a plain ``serve`` straight from the entry point, without Typer).
"""

from __future__ import annotations

from typing import Annotated

import typer

from ai_memory.cli.options import DataDir


def serve(
    data_dir: DataDir = None,
    bind: Annotated[
        str | None, typer.Option(help="host:port to listen on (default: server.bind).")
    ] = None,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow an address other machines can reach (anything but loopback).",
        ),
    ] = False,
) -> None:
    """Serve the HTTP API (and MCP) until interrupted."""
    from ai_memory.cli.serving import serve as run_server

    run_server(data_dir, bind, allow_remote)
