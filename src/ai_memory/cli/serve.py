"""``ai-memory serve``: the server in the foreground, loopback unless told otherwise."""

from __future__ import annotations

import gc
import logging
import sys
from functools import partial
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import Annotated

import typer

from ai_memory.cli.options import DataDir, load_config
from ai_memory.cli.output import err, out


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
    # The imports allocate much and free little: no collection runs while they do, and
    # what they built is kept out of every later collection (gc.freeze, once built).
    gc.disable()
    try:
        _serve(data_dir, bind, allow_remote)
    finally:
        gc.enable()


def _serve(data_dir: Path | None, bind: str | None, allow_remote: bool) -> None:
    from ai_memory.bind import check_bind, parse_bind, require_token
    from ai_memory.maintenance.init import read_token
    from ai_memory.maintenance.lock import ServerLock
    from ai_memory.maintenance.modes import private_umask, secure_layout
    from ai_memory.runtime import EarlyStart, Runtime

    config = load_config(data_dir)
    host, port = parse_bind(bind or config.server.bind)
    config.server.bind = f"{host}:{port}"  # the app checks Host headers for the address it serves
    token = require_token(read_token(config.token_file), config.token_file)
    remote = check_bind(host, allow_remote)
    private_umask()  # all the server and its git create (pages, objects, logs) stays private
    secure_layout(config)
    _configure_logging(config.logs_dir)
    lock = ServerLock(config.data_dir)
    lock.acquire(bind=f"{host}:{port}")
    try:
        _check_port_free(host, port)  # before the banner: a busy port is the only thing said
    except BaseException:
        lock.release()
        raise
    # The start-up check runs beside the server's imports; nothing answers before it ends.
    early = EarlyStart(partial(Runtime.start, config, watch=True))
    try:
        base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
        if remote:
            _warn_remote(host)
        out.print(f"ai-memory serving {config.data_dir}")
        out.print(f"  API:      {base}/api/v1")
        out.print(f"  MCP:      {base}/mcp")
        out.print(f"  health:   {base}/healthz")
        out.print(f"  web UI:   {base}/web")
        out.print(f"  sign in:  {base}/web/login (token file below)")
        out.print(f"  token:    {config.token_file}")
        from ai_memory.server import create_app, run

        app = create_app(config, token, early, defer=True)
        gc.freeze()
        gc.enable()
        run(app, config.server)
    finally:
        early.discard()
        lock.release()


def _check_port_free(host: str, port: int) -> None:
    """Bind the address once ourselves, so a busy port is one clear line, not a banner
    followed by a traceback from the server."""
    import errno
    import socket

    from ai_memory.core.errors import Unavailable

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise Unavailable(
                    f"{host}:{port} is already in use (another `ai-memory serve`?); "
                    "stop it, or pass --bind host:port"
                ) from None
            raise Unavailable(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def _warn_remote(host: str) -> None:
    message = (
        f"WARNING: listening on {host}, reachable from other machines. The bearer token is "
        "the only guard, over plain HTTP: anyone on the network path can read it and "
        "everything sent. Prefer loopback and an SSH tunnel or a TLS proxy."
    )
    err.print(message, style="bold red")
    logging.getLogger("ai_memory.server").warning(message)


def _configure_logging(logs_dir: Path) -> None:
    from ai_memory.maintenance.modes import private_dir, private_file

    private_dir(logs_dir)
    private_file(logs_dir / "server.log")
    handlers: list[logging.Handler] = [
        logging.StreamHandler(sys.stderr),
        RotatingFileHandler(
            logs_dir / "server.log", maxBytes=10 * 1024 * 1024, backupCount=5, encoding="utf-8"
        ),
    ]
    logging.basicConfig(
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        handlers=handlers,
    )
