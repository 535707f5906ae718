"""A short circuit breaker per candidate, so a dead provider is skipped, not waited on.

Closed: every call goes through. After ``failures`` consecutive transient failures it
opens for ``open_s`` seconds and the chain skips the candidate; then one call is let
through as a probe (half-open): its success closes the circuit, its failure reopens it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Literal

State = Literal["closed", "open", "half-open"]


class Breaker:
    def __init__(
        self, failures: int, open_s: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.failures = failures
        self.open_s = open_s
        self.clock = clock
        self.consecutive = 0
        self.opened_at: float | None = None
        self.probing = False

    @property
    def state(self) -> State:
        if self.opened_at is None:
            return "closed"
        if self.probing or self.clock() - self.opened_at >= self.open_s:
            return "half-open"
        return "open"

    def allow(self) -> bool:
        """Whether a call may go to this candidate now (claims the probe when half-open)."""
        state = self.state
        if state == "closed":
            return True
        if state == "open" or self.probing:
            return False
        self.probing = True
        return True

    def succeeded(self) -> None:
        self.consecutive = 0
        self.opened_at = None
        self.probing = False

    def failed(self) -> None:
        self.consecutive += 1
        if self.probing or self.consecutive >= self.failures:
            self.opened_at = self.clock()
        self.probing = False

    def abandoned(self) -> None:
        """The call was cancelled: nothing learnt, but the probe slot is free again."""
        self.probing = False

    def released(self) -> None:
        """The call ended without saying whether the service is down (a bad answer)."""
        if self.probing:
            self.succeeded()
