"""Opening connections with the pragmas every connection needs."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ai_memory.core.text import fts_text

PRIVATE = 0o600


def connect_writer(path: Path, synchronous: str = "normal") -> sqlite3.Connection:
    """The one writing connection. Autocommit mode: the writer issues BEGIN itself."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _make_private(path)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.chmod(path.with_name(path.name + suffix), PRIVATE)
    conn.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.create_function("fts_text", 1, fts_text, deterministic=True)
    return conn


def _make_private(path: Path) -> None:
    """The database is 0600 from its first byte; SQLite gives its -wal and -shm the same."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE)
    except PermissionError:
        return  # not ours to change; sqlite reports what it cannot open
    try:
        with contextlib.suppress(PermissionError):
            os.fchmod(fd, PRIVATE)
    finally:
        os.close(fd)


def connect_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection: it can never take the write lock."""
    conn = sqlite3.connect(
        f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA query_only=ON")
    return conn
