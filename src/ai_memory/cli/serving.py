"""Running the server for ``ai-memory serve``, through Typer or straight from the entry point.

The server's start-up is timed to its first answer, and loading Typer, Click, Rich
and every other command's module before it is a fifth of that. So the entry point
runs a plain ``serve [--data-dir DIR] [--bind HOST:PORT]`` directly; anything else
(``--help``, ``--allow-remote``, a typo) goes through Typer like every command. Both
print the same plain lines (never wrapped, so an address or a path copies whole)
and the same one-line error.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
from functools import partial
from pathlib import Path

from ai_memory.cli.literal import visible
from ai_memory.core.errors import AiMemoryError

OPTIONS = ("--data-dir", "--bind")


def direct_args(argv: list[str]) -> dict[str, str] | None:
    """The options of ``argv`` (after ``serve``) when the direct run takes them all, else
    None: each of ``--data-dir`` and ``--bind`` at most once, as ``--opt VALUE`` or
    ``--opt=VALUE``, with a value that is not empty and is not an option."""
    found: dict[str, str] = {}
    rest = list(argv)
    while rest:
        name, sep, value = rest.pop(0).partition("=")
        if not sep:
            value = rest.pop(0) if rest else ""
        if name not in OPTIONS or name in found or not value or value.startswith("-"):
            return None
        found[name] = value
    return found


def run_direct(argv: list[str]) -> int | None:
    """The exit status of a direct run, or None to leave ``argv`` to Typer."""
    options = direct_args(argv)
    if options is None:
        return None
    data_dir = options.get("--data-dir")
    try:
        serve(Path(data_dir) if data_dir else None, options.get("--bind"), allow_remote=False)
    except AiMemoryError as exc:
        if sys.stderr.isatty():
            from ai_memory.cli.output import err, styled

            err.print(styled("error:", "red"), exc.message)
        else:
            sys.stderr.write(f"error: {visible(exc.message)}\n")
        return 1
    except KeyboardInterrupt:  # as Typer ends a command interrupted before the server runs
        return 130
    return 0


def serve(data_dir: Path | None, bind: str | None, allow_remote: bool) -> None:
    """Serve until interrupted. The imports allocate much and free little: no collection
    runs while they do, and what they built is kept out of every later collection
    (``gc.freeze``, once built)."""
    gc.disable()
    try:
        _serve(data_dir, bind, allow_remote)
    finally:
        gc.enable()


def _serve(data_dir: Path | None, bind: str | None, allow_remote: bool) -> None:
    from ai_memory.bind import check_bind, parse_bind, require_token
    from ai_memory.config import Config
    from ai_memory.maintenance.init import read_token
    from ai_memory.maintenance.lock import ServerLock
    from ai_memory.maintenance.modes import private_umask, secure_layout
    from ai_memory.runtime import EarlyStart, Runtime

    config = Config.load(data_dir, os.environ)
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
    # What nothing waits for after it (git's recovery commit) waits for the first answers.
    early = EarlyStart(partial(Runtime.start, config, watch=True, settle=False))
    try:
        if remote:
            _warn_remote(host)
        _say(banner(str(config.data_dir), host, port, str(config.token_file)))
        from ai_memory.server import create_app, run

        app = create_app(config, token, early, defer=True)
        gc.freeze()
        gc.enable()
        run(app, config.server)
    finally:
        early.discard()
        lock.release()


def banner(data_dir: str, host: str, port: int, token_file: str) -> list[str]:
    """Where everything is: the API, MCP, health, the web UI and the token's file."""
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    return [
        f"ai-memory serving {data_dir}",
        f"  API:      {base}/api/v1",
        f"  MCP:      {base}/mcp",
        f"  health:   {base}/healthz",
        f"  web UI:   {base}/web",
        f"  sign in:  {base}/web/login (token file below)",
        f"  token:    {token_file}",
    ]


def _say(lines: list[str]) -> None:
    sys.stdout.write("".join(f"{visible(line)}\n" for line in lines))
    sys.stdout.flush()


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
    """Only ``--allow-remote`` reaches this, and that runs through Typer: Rich is loaded."""
    from ai_memory.cli.output import err

    message = (
        f"WARNING: listening on {host}, reachable from other machines. The bearer token is "
        "the only guard, over plain HTTP: anyone on the network path can read it and "
        "everything sent. Prefer loopback and an SSH tunnel or a TLS proxy."
    )
    err.print(message, style="bold red")
    logging.getLogger("ai_memory.server").warning(message)


def _configure_logging(logs_dir: Path) -> None:
    from logging.handlers import RotatingFileHandler

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
