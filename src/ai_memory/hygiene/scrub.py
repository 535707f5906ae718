"""Removing text so that no copy of it stays in the database file or its WAL.

A plain DELETE leaves the row's bytes in free pages and the FTS index keeps the
removed words in old segments until a merge; the WAL keeps every page image it was
given until it restarts. A purge runs its removals with ``secure_delete`` (freed
content is overwritten with zeros), rewrites the full-text indexes without the
removed entries, and afterwards copies the WAL back and truncates it.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from ai_memory.hygiene.report import HygieneReport
from ai_memory.runtime import Runtime
from ai_memory.store import hygiene_sql

T = TypeVar("T")
TRUNCATE_ATTEMPTS = 20
TRUNCATE_PAUSE_S = 0.05


def scrubbing(
    command: Callable[[sqlite3.Connection], T], *, optimize: bool = True
) -> Callable[[sqlite3.Connection], T]:
    """``command`` run with secure deletion on, followed (``optimize``) by a rewrite of the
    full-text indexes, in the same transaction (a removal in steps rewrites them once, last)."""

    def run(conn: sqlite3.Connection) -> T:
        previous = int(conn.execute("PRAGMA secure_delete").fetchone()[0])
        conn.execute("PRAGMA secure_delete=ON")
        try:
            result = command(conn)
            if optimize:
                hygiene_sql.optimize_indexes(conn)
        finally:
            conn.execute(f"PRAGMA secure_delete={previous}")
        return result

    return run


def truncate_wal(db_path: Path, attempts: int = TRUNCATE_ATTEMPTS) -> bool:
    """Copy the WAL into the database and cut it to zero bytes; False when readers holding
    old snapshots kept it every time (its frames are then overwritten by later writes)."""
    for attempt in range(attempts):
        if attempt:
            time.sleep(TRUNCATE_PAUSE_S)  # a reader's snapshot lasts one query
        conn = sqlite3.connect(db_path, isolation_level=None, timeout=5.0)
        try:
            busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
        except sqlite3.OperationalError:
            continue
        finally:
            conn.close()
        if busy is None or int(busy[0]) == 0:
            return True
    return False


def settle(runtime: Runtime, report: HygieneReport, relpaths: list[str]) -> None:
    """After the last step: the git checkpoint of the changed files now, and the WAL
    emptied of the frames that held the removed text."""
    runtime.checkpointer.notify(*relpaths)
    runtime.checkpointer.flush()
    if not truncate_wal(runtime.config.db_path):
        report.warnings.append(
            "a reader kept the WAL from being truncated; later writes overwrite what it holds"
        )
