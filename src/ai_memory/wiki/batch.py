"""Several page writes through :class:`Wiki` as one unit: one transaction, one checkpoint.

A consolidation (or an approved proposal) writes a handful of pages that refer to
each other; landing half of them would leave links to pages that never came. The
writer runs one command inside one savepoint, so every page, its file and whatever
the caller records beside them (``also``) commit together or not at all, and git
gets one checkpoint naming every changed file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ai_memory.core.identity import PageRef
from ai_memory.core.page import WriteResult
from ai_memory.wiki.wiki import Wiki

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class PageWrite:
    """One page of a batch, with the same preconditions :meth:`Wiki.write_page` takes."""

    ref: PageRef
    body: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    expected_page_id: int | None = None
    create_only: bool = False


@dataclass(frozen=True, slots=True)
class BatchResult(Generic[T]):
    results: list[WriteResult]
    also: T


def batch_command(
    wiki: Wiki,
    writes: Sequence[PageWrite],
    also: Callable[[sqlite3.Connection, list[WriteResult]], T],
    *,
    actor: str = "api",
) -> Callable[[sqlite3.Connection], BatchResult[T]]:
    """Validate every page now (in the caller's thread); return the writer's part.

    ``also`` runs after the pages, in the same transaction, with their results: a
    failure there, or in any page's precondition, undoes the whole batch.
    """
    commands = [
        wiki.write_command(
            w.ref,
            w.body,
            w.meta,
            expected_page_id=w.expected_page_id,
            create_only=w.create_only,
            actor=actor,
        )
        for w in writes
    ]

    def command(conn: sqlite3.Connection) -> BatchResult[T]:
        results = [page_command(conn) for page_command in commands]
        return BatchResult(results, also(conn, results))

    return command


def write_batch(
    wiki: Wiki,
    writes: Sequence[PageWrite],
    also: Callable[[sqlite3.Connection, list[WriteResult]], T],
    *,
    actor: str = "api",
) -> BatchResult[T]:
    """Write every page of ``writes`` (and run ``also``) in one writer transaction.

    ``also`` is required: ``lambda conn, results: None`` when there is nothing to add."""
    command = batch_command(wiki, writes, also, actor=actor)
    result = wiki.writer.call(command, timeout=wiki.write_timeout)
    checkpoint(wiki, writes, result.results)
    return result


async def awrite_batch(
    wiki: Wiki,
    writes: Sequence[PageWrite],
    also: Callable[[sqlite3.Connection, list[WriteResult]], T],
    *,
    actor: str = "api",
) -> BatchResult[T]:
    """:func:`write_batch` from async code, without blocking the loop."""
    command = batch_command(wiki, writes, also, actor=actor)
    result = await wiki.writer.run(command, timeout=wiki.write_timeout)
    checkpoint(wiki, writes, result.results)
    return result


def checkpoint(wiki: Wiki, writes: Sequence[PageWrite], results: Sequence[WriteResult]) -> None:
    """One git checkpoint for every page the batch changed."""
    changed = [w.ref.relpath for w, r in zip(writes, results, strict=True) if r.changed]
    if changed and wiki.checkpointer is not None:
        wiki.checkpointer.notify(*changed)
