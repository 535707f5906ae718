"""``[backfill] on_start``: a project's own past sessions, imported when its first session starts.

The session-start hook is answered first; the import runs afterwards as a task of
the server, bounded by ``max_sessions`` (the newest) and ``max_seconds``, through
the same ``/hook/batch`` ingest live hooks use. It runs once per project and server
run, and only while the project has no session of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
import time
from pathlib import Path
from typing import TYPE_CHECKING

import anyio.to_thread

from ai_memory.core.identity import Scope
from ai_memory.importers.deliver import BATCH, chunks
from ai_memory.importers.discover import agent_names
from ai_memory.importers.replay import Filters, Planned, Tally
from ai_memory.importers.run import Source, plan

if TYPE_CHECKING:
    from ai_memory.config_ingest import BackfillSettings
    from ai_memory.hooks.service import HookService

log = logging.getLogger(__name__)
HAS_SESSION = "SELECT 1 FROM sessions WHERE workspace = ? AND project = ? LIMIT 1"
BUSY_WAIT_S = 0.5


class StartBackfill:
    def __init__(self, hooks: HookService, settings: BackfillSettings, source: Source) -> None:
        self.hooks = hooks
        self.settings = settings
        self.source = source
        self._seen: set[Scope] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    def consider(self, scope: Scope, session_id: str) -> None:
        """Session ``session_id`` started in ``scope``: import the project's past the first
        time (in the background), leaving out the session that is starting."""
        if scope in self._seen:
            return
        self._seen.add(scope)
        work = self._run(scope, session_id)
        task = asyncio.get_running_loop().create_task(work, name="ai-memory-backfill")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def wait(self) -> None:
        """Until every import started so far is done (tests, and a clean stop)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def stop(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.wait()

    async def _run(self, scope: Scope, current: str) -> None:
        deadline = time.monotonic() + self.settings.max_seconds
        try:
            readers = self.hooks.runtime.readers
            if await readers.aread(lambda conn: _has_session(conn, scope)):
                return
            plans, tally = await anyio.to_thread.run_sync(self._plan, scope, current)
            sent = 0
            for planned in plans:
                if time.monotonic() > deadline:
                    break
                await self._send(planned, tally)
                sent += 1
            log.info("imported %d past session(s) of %s (%d found)", sent, scope, len(plans))
        except Exception:
            log.exception("could not import the past sessions of %s", scope)

    def _plan(self, scope: Scope, current: str) -> tuple[list[Planned], Tally]:
        filters = Filters(project=str(scope), limit=self.settings.max_sessions, skip=(current,))
        return plan(self.source, filters, agent_names([]))

    async def _send(self, planned: Planned, tally: Tally) -> None:
        """The session's items through the hooks' own batch ingest; a full queue is waited out."""
        for chunk in chunks(planned.items, BATCH):
            waiting = list(chunk)
            while waiting:
                results = await self.hooks.ingest_batch(waiting)
                busy = [waiting[r.index] for r in results if r.status == 429]
                tally.accepted += sum(1 for r in results if r.status == 202)
                waiting = busy
                if busy:
                    await asyncio.sleep(BUSY_WAIT_S)


def _has_session(conn: sqlite3.Connection, scope: Scope) -> bool:
    return conn.execute(HAS_SESSION, (scope.workspace, scope.project)).fetchone() is not None


def start_backfill(hooks: HookService) -> StartBackfill | None:
    """The on-start import when ``[backfill] on_start`` is set; the agents' stores are the
    server's user's, under ``$HOME``."""
    settings = hooks.runtime.config.backfill
    if not settings.on_start:
        return None
    return StartBackfill(hooks, settings, Source(Path.home(), dict(os.environ)))
