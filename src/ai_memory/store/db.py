"""Opening connections with the pragmas every connection needs."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ai_memory.core.text import fts_text


def connect_writer(path: Path, synchronous: str = "normal") -> sqlite3.Connection:
    """The one writing connection. Autocommit mode: the writer issues BEGIN itself."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.create_function("fts_text", 1, fts_text, deterministic=True)
    return conn


def connect_reader(path: Path) -> sqlite3.Connection:
    """A read-only connection: it can never take the write lock."""
    conn = sqlite3.connect(
        f"file:{path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA query_only=ON")
    return conn
