"""Reinforcement: a hit bumps its page's access count, at most once a minute, never waiting."""

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

    def bump(self, page_ids: Iterable[int]) -> Future[None] | None:
        """Queue the bump without waiting; a full queue just skips it (it is only a hint)."""
        chosen = self.due(page_ids)
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
