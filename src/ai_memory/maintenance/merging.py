"""Merging the page index in small steps while maintenance removes or writes in bulk,
and giving the pages that frees back to the filesystem.

FTS5 keeps its index as segments and merges them inside whichever write crosses
its work counter; on a large wiki one such merge rewrites megabytes and holds the
write lock for it (the sweep's longest holds at 100,000 pages were these). For the
length of a maintenance run, automatic merging is off and the same merges happen
here, each in a transaction of its own sized to a time budget, so every other
write keeps getting the lock within a bounded wait. Merges and removals leave
free pages inside the database file; afterwards they are returned in bounded
steps too (databases created with incremental auto-vacuum; older ones reuse them).
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

from ai_memory.store import sweep as sql
from ai_memory.store.commands import Command
from ai_memory.store.db import reclaim_step
from ai_memory.store.writer import Writer

T = TypeVar("T")

# The work one merge step may do, in CPU seconds of the writer thread (measured, not
# the wall clock, so a busy machine does not shrink steps until merging falls behind).
STEP_BUDGET_S = 0.015
MIN_LEAVES, MAX_LEAVES = 16, 256
# Merging what a whole run left behind is bounded too (a step is at least MIN_LEAVES).
MAX_FINISH_STEPS = 5000
# Free pages a database keeps after maintenance (0: every one goes back; writes grow it again).
KEEP_FREE_PAGES = 0
MIN_RECLAIM_PAGES, MAX_RECLAIM_PAGES = 16, 2048
MAX_RECLAIM_STEPS = 100_000


class Budget:
    """A step size that follows the CPU time its last step took (halve above the budget,
    grow by half below half of it), within bounds."""

    def __init__(self, size: int, low: int, high: int) -> None:
        self.size, self.low, self.high = size, low, high

    def adapt(self, cpu_s: float) -> None:
        if cpu_s > STEP_BUDGET_S:
            self.size = max(self.low, self.size // 2)
        elif cpu_s < STEP_BUDGET_S / 2:
            self.size = min(self.high, self.size * 3 // 2)


class IndexMerger:
    """Runs bounded merge steps through the writer, adapting their size to the budget."""

    def __init__(self, writer: Writer, timeout: float) -> None:
        self.writer = writer
        self.timeout = timeout
        self.leaves = Budget(64, MIN_LEAVES, MAX_LEAVES)
        self.steps = 0

    def step(self, at_most: int = 2) -> None:
        """Up to ``at_most`` merge transactions, fewer if nothing is left to merge."""
        for _ in range(at_most):
            if not self._one():
                return

    def finish(self) -> None:
        """Merge until no level needs it, so automatic merging resumes with nothing owed."""
        for _ in range(MAX_FINISH_STEPS):
            if not self._one():
                return

    def _one(self) -> bool:
        more, cpu_s = self.writer.call(
            _timed(sql.merge_step, self.leaves.size), timeout=self.timeout
        )
        self.steps += 1
        self.leaves.adapt(cpu_s)
        return more


def _timed(step: Callable[[sqlite3.Connection, int], T], size: int) -> Command[tuple[T, float]]:
    """A writer command running one step, returning its result and its CPU time."""

    def command(conn: sqlite3.Connection) -> tuple[T, float]:
        began = time.thread_time()
        result = step(conn, size)
        return result, time.thread_time() - began

    return command


@contextlib.contextmanager
def merging_in_steps(writer: Writer, timeout: float) -> Iterator[IndexMerger]:
    """Automatic merging off for the block; what it would have merged is merged in steps,
    and the setting comes back even if the block fails."""
    setting = writer.call(sql.pause_automerge, timeout=timeout)
    merger = IndexMerger(writer, timeout)
    try:
        yield merger
        merger.finish()
    finally:
        writer.call(lambda conn: sql.resume_automerge(conn, setting), timeout=timeout)
    reclaim_space(writer, timeout)


def reclaim_space(writer: Writer, timeout: float | None) -> None:
    """Give free pages back to the filesystem, a step per transaction sized to the budget
    (moving a page from the end of the file into a free slot rewrites what points to it)."""
    pages = Budget(128, MIN_RECLAIM_PAGES, MAX_RECLAIM_PAGES)
    last = None
    for _ in range(MAX_RECLAIM_STEPS):
        free, cpu_s = writer.call(_timed(reclaim_step, pages.size), timeout=timeout)
        if free <= KEEP_FREE_PAGES or free == last:
            return  # little left, or nothing more can go (not an auto-vacuum database)
        last = free
        pages.adapt(cpu_s)
