"""One hygiene operation at a time on a data dir.

``purge-project`` runs in many short writer transactions so hooks keep getting the
lock; a rename, merge or session move landing between two of its steps would carry a
half-purged project (or part of it) to another name, where the purge no longer
reaches. So every operation that changes data holds an exclusive ``flock`` on
``db/hygiene.lock`` while it runs, and a second one is refused (409) rather than
interleaved. ``flock`` belongs to the open file, so two threads of one server
exclude each other as two processes do, and the lock vanishes with a killed process.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

from ai_memory.core.errors import Conflict

LOCK_NAME = "hygiene.lock"


@contextlib.contextmanager
def one_at_a_time(db_path: Path, operation: str) -> Iterator[None]:
    """Hold the data dir's hygiene lock for ``operation``; Conflict when another holds it."""
    path = db_path.parent / LOCK_NAME
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            running = os.pread(fd, 200, 0).decode("utf-8", "replace") or "another operation"
            raise Conflict(
                f"cannot {operation} now: {running} is running on this data dir; "
                "run it again once that finishes"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, operation.encode("utf-8"), 0)
        yield
    finally:
        os.close(fd)
