"""A small pool of read-only connections, usable from threads and from async code.

Async code reads on the pool's own threads, one per connection (more could only wait
for a connection): handing a read to them costs the event loop an executor's
``submit`` and one wake-up, about half of what a generic worker-thread call does
with its capacity limiter and cancel scopes, which on a search was a sixth of the
loop's time.
"""

from __future__ import annotations

import contextvars
import queue
import sqlite3
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import ParamSpec, TypeVar

from ai_memory.store.db import connect_reader

T = TypeVar("T")
P = ParamSpec("P")


class ReaderPool:
    """Last in, first out: the connection used last has the warmest page cache (a
    write anywhere empties every cache, so one connection reused keeps more of it)."""

    def __init__(self, db_path: Path, size: int = 4) -> None:
        self._pool: queue.LifoQueue[sqlite3.Connection] = queue.LifoQueue()
        self._all = [connect_reader(db_path) for _ in range(size)]
        for conn in self._all:
            self._pool.put(conn)
        self._threads = ThreadPoolExecutor(max_workers=size, thread_name_prefix="ai-memory-read")

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
        """Run ``query`` on one of the pool's threads so the event loop never blocks on
        SQLite."""
        return await self.on_thread(self.read, query)

    async def on_thread(self, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """``function`` (which reads through this pool) on one of its threads, in the
        caller's context (who acts, above all); a caller cancelled meanwhile stops
        waiting, and the read still ends and gives its connection back."""
        import asyncio  # here: a command that reads without a loop (reindex) never loads it

        context = contextvars.copy_context()
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(
            self._threads, lambda: context.run(function, *args, **kwargs)
        )

    def close(self) -> None:
        self._threads.shutdown(wait=True)
        for conn in self._all:
            conn.close()
