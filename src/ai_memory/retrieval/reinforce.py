"""Reinforcement: a hit bumps its page's access count, at most once a minute, never waiting.

``bump`` hands the writer its command at once; ``later`` (the server's search
path) only notes the pages, and a helper thread hands them over a few times a
second, so an answer never waits for the writer to wake.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future

from ai_memory.core.errors import AiMemoryError
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)

BUMP = "UPDATE pages SET access_count = access_count + 1, last_access_at = ? WHERE id = ?"
MAX_REMEMBERED = 100_000
FLUSH_S = 0.25  # how long a noted hit may wait before the writer gets it


class Reinforcer:
    """Throttles per page, then hands one command to the writer and returns at once."""

    def __init__(
        self,
        writer: Writer,
        interval_s: float,
        clock: Callable[[], str],
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.writer = writer
        self.interval_s = interval_s
        self.clock = clock
        self.monotonic = monotonic
        self._last: dict[int, float] = {}
        self._lock = threading.Lock()
        self._pending: dict[int, None] = {}
        self._flusher: threading.Thread | None = None
        self._stopping = threading.Event()

    def due(self, page_ids: Iterable[int]) -> list[int]:
        now = self.monotonic()
        with self._lock:
            if len(self._last) > MAX_REMEMBERED:
                self._last = {k: v for k, v in self._last.items() if now - v < self.interval_s}
            chosen = [
                pid
                for pid in dict.fromkeys(page_ids)
                if now - self._last.get(pid, -1e18) >= self.interval_s
            ]
            for pid in chosen:
                self._last[pid] = now
        return chosen

    def later(self, page_ids: Iterable[int]) -> None:
        """Note the pages for the next hand-over; wakes no thread."""
        chosen = self.due(page_ids)
        if not chosen:
            return
        with self._lock:
            self._pending.update(dict.fromkeys(chosen))
            if self._flusher is None and not self._stopping.is_set():
                self._flusher = threading.Thread(
                    target=self._flush_loop, name="reinforce", daemon=True
                )
                self._flusher.start()

    def flush(self) -> Future[None] | None:
        """Hand the noted pages to the writer now."""
        with self._lock:
            chosen, self._pending = list(self._pending), {}
        return self._submit(chosen)

    def close(self) -> None:
        """Stop the helper thread and hand over what it still holds (before the writer stops)."""
        self._stopping.set()
        with self._lock:
            flusher = self._flusher
        if flusher is not None:
            flusher.join()
        self.flush()

    def _flush_loop(self) -> None:
        while not self._stopping.wait(FLUSH_S):
            self.flush()

    def bump(self, page_ids: Iterable[int]) -> Future[None] | None:
        """Queue the bump without waiting; a full queue just skips it (it is only a hint)."""
        return self._submit(self.due(page_ids))

    def _submit(self, chosen: list[int]) -> Future[None] | None:
        if not chosen:
            return None
        at = self.clock()

        def command(conn: sqlite3.Connection) -> None:
            conn.executemany(BUMP, [(at, pid) for pid in chosen])

        try:
            future = self.writer.submit(command, timeout=0)
        except AiMemoryError as exc:
            log.debug("reinforcement skipped: %s", exc)
            return None
        future.add_done_callback(_log_failure)
        return future


def _log_failure(future: Future[None]) -> None:
    exc = future.exception()
    if exc is not None:
        log.warning("reinforcement failed: %s", exc)
