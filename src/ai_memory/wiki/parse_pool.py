"""Parsing page files in worker processes while the index writer commits.

Parsing a page is Python work; indexing it is mostly SQLite's (which runs without
the interpreter lock), so a reindex splits the two: workers read and parse files
chunk by chunk, and the indexing process only hands their documents to the
writer. (Storing git blobs in the workers was tried: loose objects cost more to
write there than the checkpoint saves.)

A pool is made before the caller starts any thread: its workers are forked then
(cheap, and they inherit the modules already loaded); a pool made later starts
fresh interpreters instead, since forking a process that runs threads is unsafe.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from types import TracebackType
from typing import Any, TypeVar

from ai_memory.wiki.parse import Chunk, Outcome, parse_chunk

MAX_WORKERS = 4
T = TypeVar("T")


class ParsePool:
    """``workers`` processes (default: one per core, at most 4) parsing chunks in order."""

    def __init__(self, workers: int | None = None, *, extra: int = 0) -> None:
        """``extra`` processes more, for tasks given to :meth:`submit` beside the parsing."""
        count = workers or min(MAX_WORKERS, os.cpu_count() or 1)
        method = "fork" if threading.active_count() == 1 and os.name == "posix" else "spawn"
        self.workers = count
        context = multiprocessing.get_context(method)
        self._executor = ProcessPoolExecutor(count + extra, mp_context=context)
        self._executor.submit(os.getpid).result()  # every worker is started now

    def submit(self, function: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``function(*args)`` in a worker (a module-level function, picklable args)."""
        return self._executor.submit(function, *args)

    def stream(self, chunks: Iterable[Chunk]) -> Iterator[list[Outcome]]:
        """Each chunk's outcomes, in the order the chunks came; a few chunks ahead at most."""
        window: deque[Future[list[Outcome]]] = deque()
        for chunk in chunks:
            window.append(self._executor.submit(parse_chunk, chunk))
            if len(window) > 2 * self.workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ParsePool:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
