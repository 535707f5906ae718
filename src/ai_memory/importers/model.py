"""What a reader makes of one past session: its entries in order, with their own times."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Entry:
    """One event of a past session, as the hook payload live capture would have carried.

    ``kind`` is one of our observation kinds; ``ident`` names the entry within its session
    (a line number, a message id), so the same entry always gets the same ingest key.
    """

    kind: str
    ident: str
    at: str | None
    payload: dict[str, Any]


@dataclass(slots=True)
class Transcript:
    """One past session of one agent, read from ``source`` (a file, or a database row)."""

    agent: str
    session_id: str
    source: str
    cwd: str | None = None
    entries: list[Entry] = field(default_factory=list)
    skipped: int = 0  # lines that were truncated or not JSON

    @property
    def started_at(self) -> str | None:
        return next((e.at for e in self.entries if e.at), None)

    @property
    def ended_at(self) -> str | None:
        return next((e.at for e in reversed(self.entries) if e.at), None)

    @property
    def has_work(self) -> bool:
        return any(e.kind != "session-start" for e in self.entries)


@dataclass(frozen=True, slots=True)
class Unreadable:
    """A transcript that could not be read at all (permissions, not a file, a bad database)."""

    agent: str
    source: str
    reason: str


def read_each(
    agent: str, paths: Iterable[Path], read: Callable[[Path], Transcript]
) -> Iterator[Transcript | Unreadable]:
    """Each file read, or reported unreadable: one bad file never stops the others."""
    for path in paths:
        try:
            yield read(path)
        except OSError as exc:
            yield Unreadable(agent, str(path), exc.strerror or str(exc))
