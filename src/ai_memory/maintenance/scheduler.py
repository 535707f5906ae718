"""Periodic work inside ``serve``: idle sessions are ended, missing session pages retried."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

log = logging.getLogger(__name__)


class IdleEnder(Protocol):
    async def end_idle(self, idle_s: float) -> int: ...

    async def requeue_unwritten(self) -> int: ...


class Scheduler:
    """A small asyncio task; one failing round is logged and the next one runs anyway."""

    def __init__(self, hooks: IdleEnder, *, interval_s: float, idle_end_s: float) -> None:
        self.hooks = hooks
        self.interval_s = interval_s
        self.idle_end_s = idle_end_s
        self.rounds = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ai-memory-scheduler")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def run_once(self) -> int:
        ended = await self.hooks.end_idle(self.idle_end_s)
        retried = await self.hooks.requeue_unwritten()
        self.rounds += 1
        if ended or retried:
            log.info("ending %d idle session(s); retrying %d missing page(s)", ended, retried)
        return ended

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval_s)
            try:
                await self.run_once()
            except Exception:
                log.exception("scheduler round failed")
