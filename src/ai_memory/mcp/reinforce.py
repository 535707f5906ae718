"""Pages an agent is shown count as used: read paths reinforce what they surface."""

from __future__ import annotations

from collections.abc import Iterable

from ai_memory.runtime import Runtime


def reinforce(runtime: Runtime, page_ids: Iterable[int]) -> None:
    """Bump the access count of each page (at most once a minute each, never waited for),
    so a page that keeps being read keeps its retention and the forget sweep spares it."""
    runtime.retrieval.reinforcer.bump(page_ids)
