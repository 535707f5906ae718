"""How long writes wait in the writer's queue: from ``submit`` to the command starting.

The writer records one wait per command it runs; status and metrics read the
longest of the last few minutes and a fixed-bucket histogram. Recording takes
an uncontended lock and a bisect, so it costs well under a microsecond on the
writer thread; memory is bounded (one slot per second of the window, one count
per bucket), whatever the traffic.
"""

from __future__ import annotations

import threading
import time
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass

# Upper bounds in seconds, as Prometheus buckets: a wait is counted in the first bound >= it.
BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0)
WINDOW_S = 300


@dataclass(frozen=True, slots=True)
class WaitSnapshot:
    """Counts since start (``buckets[i]`` waits <= ``BUCKETS[i]``, not cumulative) and
    the longest wait of the last ``WINDOW_S`` seconds."""

    buckets: tuple[int, ...]
    count: int
    sum_s: float
    longest_recent_s: float


class WaitTracker:
    def __init__(self, window_s: int = WINDOW_S) -> None:
        self.window_s = window_s
        self._lock = threading.Lock()
        self._counts = [0] * (len(BUCKETS) + 1)  # the last one: longer than every bound
        self._sum = 0.0
        # (whole second, longest wait that second), newest last; at most one per second.
        self._recent: deque[tuple[int, float]] = deque(maxlen=window_s + 1)

    def record(self, wait_s: float, now: float | None = None) -> None:
        second = int(time.monotonic() if now is None else now)
        with self._lock:
            self._counts[bisect_left(BUCKETS, wait_s)] += 1
            self._sum += wait_s
            recent = self._recent
            if recent and recent[-1][0] == second:
                if wait_s > recent[-1][1]:
                    recent[-1] = (second, wait_s)
            else:
                recent.append((second, wait_s))

    def snapshot(self, now: float | None = None) -> WaitSnapshot:
        horizon = int(time.monotonic() if now is None else now) - self.window_s
        with self._lock:
            counts = tuple(self._counts)
            total = self._sum
            longest = max((w for at, w in self._recent if at > horizon), default=0.0)
        return WaitSnapshot(counts, sum(counts), total, longest)
