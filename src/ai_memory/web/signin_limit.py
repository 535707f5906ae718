"""Slowing down password guessing: failed sign-ins counted per user name and per address.

Held in memory by the login routes of one app (a restart forgets it, which
costs a guesser nothing they did not already have). An address gets more tries
than a name, since several people may sign in from one address behind a NAT.
The table is bounded: past ``MAX_KEYS`` the stalest entries go first.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

NAME_FAILURES = 5
ADDRESS_FAILURES = 20
WINDOW_S = 300.0
MAX_KEYS = 10_000


@dataclass
class SignInLimiter:
    name_failures: int = NAME_FAILURES
    address_failures: int = ADDRESS_FAILURES
    window_s: float = WINDOW_S
    clock: Callable[[], float] = time.monotonic
    _failed: dict[str, deque[float]] = field(default_factory=dict)

    def retry_after(self, name: str, address: str) -> int | None:
        """Seconds until ``name`` from ``address`` may try again; None when it may now."""
        now = self.clock()
        waits = [
            self._wait(f"name:{name.lower()}", self.name_failures, now),
            self._wait(f"addr:{address}", self.address_failures, now),
        ]
        longest = max((wait for wait in waits if wait is not None), default=None)
        return None if longest is None else max(1, math.ceil(longest))

    def failed(self, name: str, address: str) -> None:
        now = self.clock()
        for key in (f"name:{name.lower()}", f"addr:{address}"):
            self._failed.setdefault(key, deque()).append(now)
        self._bound(now)

    def succeeded(self, name: str) -> None:
        """A right password clears its name's count (the address keeps its own)."""
        self._failed.pop(f"name:{name.lower()}", None)

    def _wait(self, key: str, most: int, now: float) -> float | None:
        times = self._failed.get(key)
        if times is None:
            return None
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times:
            del self._failed[key]
            return None
        if len(times) < most:
            return None
        return times[-most] + self.window_s - now

    def _bound(self, now: float) -> None:
        if len(self._failed) <= MAX_KEYS:
            return
        for key in [k for k, times in self._failed.items() if times[-1] <= now - self.window_s]:
            del self._failed[key]
        while len(self._failed) > MAX_KEYS:
            del self._failed[next(iter(self._failed))]
