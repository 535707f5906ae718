"""Read commands without a server: the same reads, on a read-only connection to the index.

SQLite in WAL mode lets a reader open the database while nothing (or a server)
writes it; ``mode=ro`` makes sure this path never writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import Any, TypeVar

from ai_memory.cli.output import err, styled
from ai_memory.config import Config
from ai_memory.core.errors import NotInitialised, Unavailable

T = TypeVar("T")


@contextmanager
def read_only(config: Config) -> Iterator[sqlite3.Connection]:
    if not config.db_path.exists():
        raise NotInitialised(f"{config.data_dir} is not initialised; run `ai-memory init`")
    uri = f"file:{config.db_path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
        conn.row_factory = sqlite3.Row
        yield conn


def or_local(
    config: Config, remote: Callable[[], T], local: Callable[[sqlite3.Connection], T]
) -> T:
    """``remote()``; when no server answers, say so once and run ``local`` on the index."""
    try:
        return remote()
    except Unavailable as exc:
        err.print(styled("note:", "yellow"), f"{exc.message}; reading the index read-only")
    with read_only(config) as conn:
        return local(conn)


def page_local(conn: sqlite3.Connection, ref: Any, version: int | None) -> dict[str, Any]:
    from ai_memory.wiki.wiki import read_page

    return read_page(conn, ref, version, None)


def history_local(conn: sqlite3.Connection, ref: Any) -> dict[str, Any]:
    from ai_memory.wiki.wiki import history

    return {"path": ref.path, "versions": history(conn, ref)}
