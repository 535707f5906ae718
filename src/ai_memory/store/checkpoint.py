"""WAL checkpoints off the commit path.

SQLite's automatic checkpoint runs inside the COMMIT that crosses its
threshold, so one unlucky write transaction holds the write lock for the whole
copy (up to ~200 ms on a large WAL). The writer turns it off
(``wal_autocheckpoint=0``) and this thread copies the WAL back into the
database with PASSIVE checkpoints from its own connection instead: a PASSIVE
checkpoint never takes the write lock, so writes go on while it runs.

The WAL can only restart from its beginning once every frame has been copied
back; a writer that never pauses could outrun the copy and grow the WAL without
limit. So the writer sets ``journal_size_limit`` to ``limit_bytes`` (a restarted
WAL is cut back to it) and, whenever the WAL file has grown past it, runs one
checkpoint itself between two transactions (lock not held), which lets its next
transaction restart the WAL.
Durability is unchanged: a commit is as durable in the WAL as after a copy.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import threading
from pathlib import Path

log = logging.getLogger(__name__)

CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"


def passive_checkpoint(conn: sqlite3.Connection) -> tuple[int, int]:
    """Copy what it can of the WAL into the database; return (frames held, frames copied)."""
    rows = conn.execute(CHECKPOINT).fetchall()  # stepped to the end: no statement left open
    row = rows[0] if rows else None
    return (int(row[1]), int(row[2])) if row is not None else (0, 0)


class Checkpointer:
    """A thread that checkpoints the WAL at most every ``interval_s`` after writes."""

    def __init__(
        self, db_path: Path, *, interval_s: float = 0.5, limit_bytes: int = 32 * 1024 * 1024
    ) -> None:
        self.db_path = db_path
        self.wal_path = db_path.with_name(db_path.name + "-wal")
        self.interval_s = interval_s
        self.limit_bytes = limit_bytes
        self.checkpoints = 0
        # One checkpoint at a time: a PASSIVE checkpoint that finds another running
        # gives up at once, and the writer's own (when the WAL is overdue) must not.
        self._running = threading.Lock()
        self._written = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        conn = sqlite3.connect(self.db_path, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        self._thread = threading.Thread(
            target=self._run, args=(conn,), name="ai-memory-checkpoint", daemon=True
        )
        self._thread.start()

    def notify(self) -> None:
        """A transaction committed: there is WAL to copy back."""
        self._written.set()

    @property
    def overdue(self) -> bool:
        """The WAL has passed its limit: the writer should checkpoint before writing more."""
        try:
            return self.wal_path.stat().st_size > self.limit_bytes
        except OSError:
            return False

    def checkpoint(self, conn: sqlite3.Connection) -> None:
        """Copy the WAL back, waiting for a checkpoint already running on the other side."""
        with self._running:
            passive_checkpoint(conn)
            self.checkpoints += 1

    def try_checkpoint(self, conn: sqlite3.Connection) -> None:
        """:meth:`checkpoint`, a failure logged (the WAL grows meanwhile; the next write
        or interval tries again) rather than stopping the thread that asked."""
        try:
            self.checkpoint(conn)
        except sqlite3.Error:
            log.warning("WAL checkpoint failed; retrying after the next write")

    def stop(self) -> None:
        """Stop the thread and close its connection (the writer's close does the last copy)."""
        self._stopping.set()
        self._written.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self, conn: sqlite3.Connection) -> None:
        try:
            while True:
                self._written.wait()
                if self._stopping.is_set():
                    return
                self._written.clear()
                self.try_checkpoint(conn)
                if self._stopping.wait(self.interval_s):
                    return
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.close()
