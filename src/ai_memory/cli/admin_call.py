"""Running one admin operation: through the server that owns the data, else in this process.

A server owns the data when it holds the data dir's lock, or when the command
names one (``--server``) or this machine signed in to one (``ai-memory login``):
then the command asks its ``/admin`` routes with the credential the other
commands use. Otherwise it takes the lock and runs the same store function here,
as the operator.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ai_memory.cli.options import client_for

if TYPE_CHECKING:
    import sqlite3

    from ai_memory.config import Config
    from ai_memory.runtime import Runtime

T = TypeVar("T")
Local = Callable[["Runtime"], dict[str, Any]]


def changing(command: Callable[[sqlite3.Connection, str], dict[str, Any]]) -> Local:
    """Run ``command(conn, now)`` as one writer command, as the operator."""
    from ai_memory.core.clock import now_iso

    return lambda runtime: runtime.writer.call(lambda conn: command(conn, now_iso()))


def reading(query: Callable[[sqlite3.Connection], dict[str, Any]]) -> Local:
    return lambda runtime: runtime.readers.read(query)


def admin_call(
    config: Config,
    server: str | None,
    method: str,
    path: str,
    local: Local,
    *,
    json: dict[str, Any] | None = None,
    params: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The server's answer to ``method path``, or ``local(runtime)`` on this data dir."""

    def ask() -> dict[str, Any]:
        kwargs: dict[str, Any] = {"json": json} if json is not None else {}
        if params:
            kwargs["params"] = params
        answer: dict[str, Any] = client_for(config, server).request(method, path, **kwargs)
        return answer

    if names_a_server(server):
        return ask()
    return served_or_local(config, "admin", ask, local)


def names_a_server(server: str | None) -> bool:
    """``--server``, or a machine signed in with ``ai-memory login``: its memory is there.

    Such a command asks that server alone; it never falls back to a data dir here,
    which on a laptop is absent or someone else's (the operator's) memory.
    """
    from ai_memory import locate

    return bool(server) or locate.credential(os.environ) is not None


def require_data_dir(config: Config, operation: str) -> None:
    """Refuse, with what to do, a direct-disk command where no data dir was ever made."""
    from ai_memory.core.errors import NotInitialised

    if not config.data_dir.is_dir():
        raise NotInitialised(
            f"no data dir at {config.data_dir}: `ai-memory {operation}` works on the "
            "server's machine (or pass --data-dir); on another machine sign in with "
            "`ai-memory login` or pass --server"
        )


def served_or_local(
    config: Config, operation: str, ask: Callable[[], T], local: Callable[[Runtime], T]
) -> T:
    """``ask()`` when a server holds the data dir's lock, else ``local(runtime)`` under it."""
    from ai_memory.core.errors import ServerRunning, Unavailable
    from ai_memory.maintenance.lock import ServerLock

    require_data_dir(config, operation)
    lock = ServerLock(config.data_dir, operation=operation)
    try:
        lock.acquire()
    except ServerRunning as running:
        try:
            return ask()
        except Unavailable:
            raise running from None
    try:
        from ai_memory.runtime import Runtime

        runtime = Runtime.start(config, embed=False, search=False)
        try:
            return local(runtime)
        finally:
            runtime.stop()
    finally:
        lock.release()
