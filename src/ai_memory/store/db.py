"""Opening connections with the pragmas every connection needs."""

from __future__ import annotations

import contextlib
import os
import sqlite3
from pathlib import Path

from ai_memory.core.text import fts_text

PRIVATE = 0o600
AUTO_VACUUM_INCREMENTAL = 2
# A page of a note (~2.5-4 KB with its row) fills a 4 KB database page alone, a third
# of it left empty; on 2 KB pages its row spills into one overflow page that is used
# whole, so the same index takes ~17% less disk (FTS blocks likewise).
PAGE_SIZE = 2048
# Pages one reclaim step frees at most (2 MB of 2 KB pages): a few milliseconds of work.
RECLAIM_STEP_PAGES = 1024
# How long a statement waits for another connection's lock before it fails.
BUSY_TIMEOUT_MS = 10_000


def connect_writer(path: Path, synchronous: str = "normal") -> sqlite3.Connection:
    """The one writing connection. Autocommit mode: the writer issues BEGIN itself."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _make_private(path)
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    if conn.execute("PRAGMA page_count").fetchone()[0] == 0:
        # Only a new database can take these (an existing one needs a VACUUM): pages
        # that index merges and removals free can then be given back to the filesystem.
        conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
        conn.execute("PRAGMA auto_vacuum=INCREMENTAL")
    conn.execute("PRAGMA journal_mode=WAL")
    for suffix in ("-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.chmod(path.with_name(path.name + suffix), PRIVATE)
    conn.execute(f"PRAGMA synchronous={'FULL' if synchronous == 'full' else 'NORMAL'}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA temp_store=MEMORY")
    conn.create_function("fts_text", 1, fts_text, deterministic=True)
    return conn


def begin_at_once(conn: sqlite3.Connection) -> bool:
    """``BEGIN IMMEDIATE`` unless another connection holds the write lock (False: nothing
    begun), where a plain one would wait up to the busy timeout for it."""
    conn.execute("PRAGMA busy_timeout=0")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError:
        return False
    finally:
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    return True


def reclaim_step(conn: sqlite3.Connection, pages: int = RECLAIM_STEP_PAGES) -> int:
    """Give up to ``pages`` free pages back to the filesystem; return how many stay free
    (0 for a database created without incremental auto-vacuum, which cannot give any).

    The pragma frees a page per step of its statement, and Python's ``sqlite3`` steps a
    statement that returns no columns once: so it runs once per page (microseconds each),
    not once with ``pages``, which would free a single page per transaction."""
    if conn.execute("PRAGMA auto_vacuum").fetchone()[0] != AUTO_VACUUM_INCREMENTAL:
        return 0
    free = int(conn.execute("PRAGMA freelist_count").fetchone()[0])
    for _ in range(min(int(pages), free)):
        conn.execute("PRAGMA incremental_vacuum(1)")
    return int(conn.execute("PRAGMA freelist_count").fetchone()[0])


def release_wal(path: Path) -> None:
    """Copy the WAL back and remove it, once every other connection has closed.

    The writer's own close does it only if it is the last connection; at shutdown the
    readers close after it, so the WAL (up to its size limit) would stay on disk."""
    if not path.with_name(path.name + "-wal").exists():
        return
    # A reader in another process (a local CLI search) delays it by one second at most.
    conn = sqlite3.connect(path, isolation_level=None, timeout=1.0)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()  # the last connection to close removes the WAL


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
    conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
    conn.execute("PRAGMA query_only=ON")
    return conn
