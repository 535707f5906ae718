"""Ranked streams: each ranks page versions on its own, filters applied inside its query."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class StreamHit:
    page_id: int
    score: float
    detail: dict[str, Any] = field(default_factory=dict)
    session: bool = False  # a session page: its text and its turns are one source


@dataclass(slots=True)
class StreamResult:
    name: str
    hits: list[StreamHit]
    ms: float = 0.0
    note: str | None = None
    strength: list[float] | None = None  # per hit, in (0, 1]: scales its fused share

    def top(self, n: int) -> list[StreamHit]:
        return self.hits[:n]
