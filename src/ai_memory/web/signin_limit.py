"""Slowing down guessing: sign-in attempts counted per user name and per address.

Held in memory by the login routes of one app (a restart forgets it, which
costs a guesser nothing they did not already have). An address gets more tries
than a name, since several people may sign in from one address behind a NAT;
the token form, which has no name, is counted by its address alone.

An admitted attempt counts as a failure from the moment it is admitted until it
succeeds, so a burst of concurrent guesses cannot all slip in before the first
one has been checked. While a limit holds, refusals are counted, not reported
one by one: the refusal that engages a limit says so, the rest are summed up
for the next attempt that limit lets through. The audit log therefore grows
only as fast as the limits let attempts in. The table is bounded: past
``MAX_KEYS`` the stalest entries go first.
"""

from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

NAME_FAILURES = 5
ADDRESS_FAILURES = 20
WINDOW_S = 300.0
MAX_KEYS = 10_000

Limit = Literal["name", "address"]


@dataclass(frozen=True)
class Ended:
    """A limit that held and has lifted: ``suppressed`` refusals went unreported."""

    limit: Limit
    suppressed: int


@dataclass(frozen=True)
class Admission:
    """What ``SignInLimiter.admit`` decided for one attempt.

    ``wait`` is None when the attempt may go ahead; otherwise the seconds until it
    may, ``engaged`` naming the limit when this refusal is the first under it (the
    one to report). ``ended`` lists the limits that lifted since they last refused.
    """

    wait: int | None
    engaged: Limit | None = None
    ended: tuple[Ended, ...] = ()


@dataclass
class _Count:
    times: deque[float] = field(default_factory=deque)
    refused: int = 0  # refusals since the limit engaged; 0 while it does not hold


@dataclass
class SignInLimiter:
    name_failures: int = NAME_FAILURES
    address_failures: int = ADDRESS_FAILURES
    window_s: float = WINDOW_S
    clock: Callable[[], float] = time.monotonic
    _counts: dict[str, _Count] = field(default_factory=dict)

    def admit(self, name: str | None, address: str) -> Admission:
        """Let an attempt for ``name`` (None: the token form) from ``address`` in, or refuse it.

        An admitted attempt is counted as failed until ``succeeded`` says otherwise.
        """
        now = self.clock()
        keys = self._keys(name, address)
        waits = {key: self._wait(key, most, now) for key, most, _ in keys}
        limiting = [(key, limit) for key, _, limit in keys if waits[key] is not None]
        if limiting:
            return self._refuse(limiting, max(w for w in waits.values() if w is not None))
        ended = []
        for key, _, limit in keys:
            count = self._counts.setdefault(key, _Count())
            if count.refused > 1:
                ended.append(Ended(limit, count.refused - 1))
            count.refused = 0
            count.times.append(now)
        self._bound(now)
        return Admission(None, ended=tuple(ended))

    def succeeded(self, name: str | None, address: str) -> None:
        """A right password clears its name's count; the address only forgets this attempt."""
        if name is not None:
            self._counts.pop(_name_key(name), None)
        count = self._counts.get(_address_key(address))
        if count is not None and count.times:
            count.times.pop()

    def retry_after(self, name: str | None, address: str) -> int | None:
        """Seconds until ``name`` from ``address`` may try again; None when it may now."""
        now = self.clock()
        waits = [self._wait(key, most, now) for key, most, _ in self._keys(name, address)]
        longest = max((wait for wait in waits if wait is not None), default=None)
        return None if longest is None else max(1, math.ceil(longest))

    def _keys(self, name: str | None, address: str) -> list[tuple[str, int, Limit]]:
        keys: list[tuple[str, int, Limit]] = []
        if name is not None:
            keys.append((_name_key(name), self.name_failures, "name"))
        keys.append((_address_key(address), self.address_failures, "address"))
        return keys

    def _refuse(self, limiting: list[tuple[str, Limit]], wait: float) -> Admission:
        """Count the refusal once: under a limit already reported, else engage the first."""
        held = [(key, limit) for key, limit in limiting if self._counts[key].refused]
        key, limit = (held or limiting)[0]
        self._counts[key].refused += 1
        return Admission(max(1, math.ceil(wait)), engaged=None if held else limit)

    def _wait(self, key: str, most: int, now: float) -> float | None:
        count = self._counts.get(key)
        if count is None:
            return None
        times = count.times
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if not times and not count.refused:
            del self._counts[key]
            return None
        if len(times) < most:
            return None
        return times[-most] + self.window_s - now

    def _bound(self, now: float) -> None:
        if len(self._counts) <= MAX_KEYS:
            return
        for key in [k for k, c in self._counts.items() if _stale(c, now - self.window_s)]:
            del self._counts[key]
        while len(self._counts) > MAX_KEYS:
            del self._counts[next(iter(self._counts))]


def _name_key(name: str) -> str:
    return f"name:{name.lower()}"


def _address_key(address: str) -> str:
    return f"addr:{address}"


def _stale(count: _Count, before: float) -> bool:
    return not count.times or count.times[-1] <= before
