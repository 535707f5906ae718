"""A small pool of read-only connections, usable from threads and from async code."""

from __future__ import annotations

import queue
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import anyio.to_thread

from ai_memory.store.db import connect_reader

T = TypeVar("T")


class ReaderPool:
    """Last in, first out: the connection used last has the warmest page cache (a
    write anywhere empties every cache, so one connection reused keeps more of it)."""

    def __init__(self, db_path: Path, size: int = 4) -> None:
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all = [connect_reader(db_path) for _ in range(size)]
        for conn in self._all:
            self._pool.put(conn)

    @contextmanager
    def connection(self) -> Iterator[sqlite3.Connection]:
        conn = self._pool.get()
        try:
            yield conn
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._pool.put(conn)

    def read(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` on a pooled connection in the calling thread, in one read
        transaction, so every statement it runs sees the same snapshot."""
        with self.connection() as conn:
            conn.execute("BEGIN")
            return query(conn)

    async def aread(self, query: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``query`` in a worker thread so the event loop never blocks on SQLite."""
        return await anyio.to_thread.run_sync(self.read, query)

    def close(self) -> None:
        for conn in self._all:
            conn.close()
