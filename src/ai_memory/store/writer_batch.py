"""What the writer runs: a submitted command with its future, and how a batch of them is cut
into runs and guarded while its transaction holds the lock."""

from __future__ import annotations

import contextlib
import contextvars
import sqlite3
from collections.abc import Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ai_memory.store.commands import Command, Rerunnable
from ai_memory.store.settle import answer

if TYPE_CHECKING:  # a reindex runs no event loop: it need not load asyncio
    import asyncio

    from ai_memory.store.files import FileStage


@dataclass(slots=True)
class Job:
    command: Command[Any]
    future: Future[Any]
    submitted: float = 0.0  # perf_counter() at submit, for the queue wait
    waiter: asyncio.Future[Any] | None = None  # the coroutine awaiting it, if any
    # The submitter's context: the command runs in it, so it knows who it acts for.
    context: contextvars.Context = field(default_factory=contextvars.copy_context)


def runs(batch: list[Job]) -> Iterator[list[Job]]:
    """The batch in order, cut into runs of neighbouring rerunnable commands and single
    other commands."""
    run: list[Job] = []
    for job in batch:
        if isinstance(job.command, Rerunnable):
            run.append(job)
            continue
        if run:
            yield run
            run = []
        yield [job]
    if run:
        yield run


def fail_pending(batch: list[Job], exc: Exception) -> None:
    """Answer every job of ``batch`` not answered yet with ``exc``."""
    answer((job.future, job.waiter, False, exc) for job in batch if not job.future.done())


def start_clean(conn: sqlite3.Connection, files: FileStage) -> None:
    """Leave nothing of a failed batch for the next one: its staged files, its transaction."""
    files.discard_since(0)
    with contextlib.suppress(sqlite3.Error):
        if conn.in_transaction:
            conn.execute("ROLLBACK")
