"""Answering a batch's callers: their futures, and the event loops that await them.

``asyncio.wrap_future`` wakes the awaiting loop once per command (a callback, a
write to its self-pipe, a wake-up) from the writer thread, which holds the GIL
for each. A batch is answered in one go instead: every command's future is
resolved, and each loop that awaits some of them is woken once with the whole
list.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # types only: a process that never runs a loop need not load asyncio
    import asyncio

# One command's answer: its future, the asyncio future awaiting it (if any), whether it
# succeeded, and its value or error.
Answer = tuple[Future[Any], "asyncio.Future[Any] | None", bool, Any]


def answer(answers: Iterable[Answer]) -> None:
    """Resolve every future; wake each awaiting loop once for all of its own."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], bool, Any]]] = {}
    for future, waiter, ok, value in answers:
        if ok:
            future.set_result(value)
        else:
            future.set_exception(value)
        if waiter is not None:
            by_loop.setdefault(waiter.get_loop(), []).append((waiter, ok, value))
    for loop, waiters in by_loop.items():
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody awaits any more
            loop.call_soon_threadsafe(_resolve, waiters)


def _resolve(waiters: list[tuple[asyncio.Future[Any], bool, Any]]) -> None:
    """On the loop: hand each awaiting coroutine its answer (unless it gave up)."""
    for waiter, ok, value in waiters:
        if waiter.done():
            continue
        if ok:
            waiter.set_result(value)
        else:
            waiter.set_exception(value)
