"""One import: find the sessions, plan them, send each through a sink, count everything."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ai_memory.importers.deliver import Sink
from ai_memory.importers.discover import find
from ai_memory.importers.replay import Filters, Planned, Planner, Tally

Advance = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class Source:
    """Where the agents keep their sessions: a home folder and the variables that move them."""

    home: Path
    env: Mapping[str, str]


def plan(source: Source, filters: Filters, agents: list[str]) -> tuple[list[Planned], Tally]:
    tally = Tally()
    planned = Planner(filters, source.env).plan(find(source.home, source.env, agents), tally)
    return planned, tally


def replay(
    plans: list[Planned],
    sink: Sink,
    tally: Tally,
    advance: Advance | None = None,
    deadline: float | None = None,
) -> int:
    """Send every planned session (until ``deadline``, a ``time.monotonic()`` value);
    return how many were sent. The sink's ``finish`` runs even when one fails."""
    sent = 0
    try:
        for plan in plans:
            if deadline is not None and time.monotonic() > deadline:
                break
            sink.send(plan, tally)
            sent += 1
            if advance is not None:
                advance(sent, len(plans))
    finally:
        sink.finish()
    return sent
