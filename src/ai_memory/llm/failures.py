"""How a provider call failed, as the chain needs to know it: try the next one or stop.

These never leave the ``llm`` package: the chain turns them into
:class:`~ai_memory.core.errors.LlmUnavailable` once no candidate is left. Their
messages name the provider, model and status, never a body or a key.
"""

from __future__ import annotations


class Transient(Exception):
    """429, 5xx, a timeout or a connection error: another candidate may answer."""

    def __init__(self, kind: str, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retry_after_s = retry_after_s


class Rejected(Exception):
    """The provider refused the call itself (400, 401, 403, 404…): another try won't help."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


TRANSIENT_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})


def is_transient_status(status: int) -> bool:
    return status in TRANSIENT_STATUSES or status >= 500


def retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header given in seconds; dates are not worth parsing."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None
