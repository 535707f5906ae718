"""The consolidation queue's worker and its on-demand runs, inside the server.

The worker takes due jobs one at a time (the provider is the slow part, and the
chain caps its own concurrency). At start it releases the leases a killed server
left, since only one server runs per data dir; a lease that runs out while this
server lives (a stuck call) is claimed again too. A failed try is queued again
after a doubling backoff until its tries are spent; then it stays ``failed``,
visible with its session id in status and through ``ai-memory consolidate --jobs``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from typing import Any

from ai_memory.config_llm import ConsolidationSettings
from ai_memory.consolidate.consolidation import Request, consolidate
from ai_memory.consolidate.consolidation_gate import require_chat
from ai_memory.consolidate.consolidation_reads import latest_ended_session, read_session
from ai_memory.core.clock import now_iso, utc_now
from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.hooks.observations import owner_args, require_own_session
from ai_memory.runtime import Runtime
from ai_memory.store import llm_jobs

log = logging.getLogger(__name__)
FAILED_SHOWN = 20


class ConsolidationWorker:
    """Drains the queue while the server runs."""

    def __init__(self, runtime: Runtime, settings: ConsolidationSettings) -> None:
        self.runtime = runtime
        self.settings = settings
        self._task: asyncio.Task[None] | None = None
        self.runs = 0
        self.failures = 0

    async def start(self) -> None:
        """Release what a killed server held, then drain the queue in the background."""
        released = await self.runtime.writer.run(
            lambda conn: llm_jobs.release_all(conn, now_iso()), timeout=None
        )
        if released:
            log.warning("taking over %d consolidation job(s) a stopped server left", released)
        self._task = asyncio.create_task(self._loop(), name="ai-memory-consolidation")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    # -- the worker ---------------------------------------------------------------

    async def _loop(self) -> None:
        while True:
            try:
                ran = await self._next()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("consolidation worker step failed")
                ran = False
            if not ran:
                await asyncio.sleep(self.settings.poll_s)

    async def _next(self) -> bool:
        """Run one due job; False when none was due."""
        if not await self.runtime.readers.aread(lambda conn: llm_jobs.any_due(conn, utc_now())):
            return False
        lease = self.settings.lease_s
        row = await self.runtime.writer.run(
            lambda conn: llm_jobs.claim(conn, utc_now(), lease), timeout=10
        )
        if row is None:
            return False
        scope = Scope(row["workspace"], row["project"])
        request = Request(scope, row["session_id"], multi_page=self.settings.multi_page)
        self.runs += 1
        try:
            await execute_job(self.runtime, self.settings, row, request)
        except Exception:  # recorded on the job
            self.failures += 1
        return True

    # -- status -------------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        counters = {"auto": self.settings.auto, "runs": self.runs, "failures": self.failures}
        return {**counters, **self.runtime.readers.read(job_status)}


async def consolidate_now(
    runtime: Runtime,
    settings: ConsolidationSettings,
    scope: Scope,
    session_id: str | None,
    *,
    multi_page: bool,
    dry_run: bool,
    who: Principal | None = None,
) -> dict[str, Any]:
    """Consolidate one session now (without ``session_id``: the latest completed one
    ``who`` owns; any owner's for the operator and admins).

    The same session at the same observation count is done once: a repeat answers
    the stored result. ``dry_run`` asks the provider and writes nothing, no job either.
    """
    chat = require_chat(runtime)
    sid = session_id
    if sid is None:
        owner = owner_args(who)
        sid = await runtime.readers.aread(lambda conn: latest_ended_session(conn, scope, owner))
    else:
        await runtime.readers.aread(lambda conn: require_own_session(conn, who, scope, sid))
    limit = settings.prompt_chars
    state, _ = await runtime.readers.aread(lambda conn: read_session(conn, scope, sid, limit))
    request = Request(scope, sid, multi_page=multi_page, dry_run=dry_run)
    if dry_run:
        return await consolidate(runtime, chat, request, settings)
    count = state.observation_count
    job = await runtime.writer.run(
        lambda conn: llm_jobs.enqueue(
            conn, scope.workspace, scope.project, sid, now_iso(), count=count
        ),
        timeout=10,
    )
    if job["state"] == "done":
        return {**llm_jobs.to_dict(job)["result"], "job": _job(job), "already_done": True}
    lease = settings.lease_s
    claimed = await runtime.writer.run(
        lambda conn: llm_jobs.claim_one(conn, int(job["id"]), utc_now(), lease), timeout=10
    )
    if claimed is None:  # the worker is on it right now
        return {"session_id": sid, "job": _job(job), "running": True}
    result = await execute_job(runtime, settings, claimed, request)
    return {**result, "job": {**_job(claimed), "state": "done"}}


async def execute_job(
    runtime: Runtime, settings: ConsolidationSettings, row: sqlite3.Row, request: Request
) -> dict[str, Any]:
    """Run a claimed job; a failure is recorded on it (retry later, or failed) and raised."""
    job_id = int(row["id"])
    try:
        chat = require_chat(runtime)
        return await consolidate(runtime, chat, request, settings, job_id=job_id)
    except Exception as exc:
        # A session that is gone or cannot be consolidated will not get better.
        final = isinstance(exc, InvalidInput | NotFound)
        attempts = 0 if final else settings.max_attempts
        error = f"{type(exc).__name__}: {exc}"
        state = await runtime.writer.run(
            lambda conn: llm_jobs.retry_or_fail(
                conn,
                job_id,
                error,
                utc_now(),
                max_attempts=attempts,
                backoff_s=settings.retry_backoff_s,
            ),
            timeout=None,
        )
        log.warning("consolidation of session %s: %s (%s)", request.session_id, error, state)
        raise


def job_status(conn: sqlite3.Connection) -> dict[str, Any]:
    """The queue at a glance: counts by state and the latest failed jobs' sessions."""
    failed = llm_jobs.listed(conn, "failed", FAILED_SHOWN)
    return {"jobs": llm_jobs.counts(conn), "failed": [_brief(job) for job in failed]}


async def start_worker(runtime: Runtime, sections: dict[str, Any]) -> ConsolidationWorker | None:
    """The server's worker, started only with a provider (and then shown in status)."""
    if runtime.llm is None:
        return None
    worker = ConsolidationWorker(runtime, runtime.config.consolidation)
    await worker.start()
    sections["consolidation"] = worker.status
    return worker


def _job(row: sqlite3.Row) -> dict[str, Any]:
    return {"id": row["id"], "state": row["state"], "attempts": row["attempts"]}


def _brief(job: dict[str, Any]) -> dict[str, Any]:
    keys = ("id", "project", "session_id", "attempts", "last_error", "updated_at")
    return {key: job[key] for key in keys}
