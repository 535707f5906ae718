"""Scheduled maintenance in ``serve``: forget sweep, lint and embedding backfill.

One asyncio task runs them one at a time (they never overlap), each in a worker
thread (never inside a request). Each task's last start and finish are kept in
the index, so the cadence survives a restart; work that came due while the
server was down starts ``overdue_delay_s`` after start, not in the middle of it.
An interval of 0 turns a task off.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.maintenance.lint import lint
from ai_memory.maintenance.sweep import Sweeper
from ai_memory.store import runs
from ai_memory.wiki.wiki import Wiki

log = logging.getLogger(__name__)

MAX_SLEEP_S = 3600.0  # look again at least hourly (a clock jump, a changed cadence)


def _parse(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


class MaintenanceJobs:
    def __init__(self, wiki: Wiki, config: Config, clock: Callable[[], str] | None = None) -> None:
        self.wiki = wiki
        self.config = config
        self.clock = clock or (lambda: wiki.clock())
        self.started_at = _parse(self.clock())
        self.last: dict[str, dict[str, Any]] = wiki.readers.read(runs.runs)
        self.running: str | None = None
        self._task: asyncio.Task[None] | None = None

    def intervals(self) -> dict[str, float]:
        """Enabled tasks and their interval in hours."""
        m = self.config.maintenance
        tasks = {"forget-sweep": m.sweep_interval_h, "lint": m.lint_interval_h}
        if self.config.embeddings.provider != "none":
            tasks["embedding-backfill"] = m.backfill_interval_h
        return {name: hours for name, hours in tasks.items() if hours > 0}

    def due_at(self, task: str) -> datetime:
        """When ``task`` runs next: its interval after the last finish, but never sooner
        than the bounded delay after start."""
        earliest = self.started_at + timedelta(seconds=self.config.maintenance.overdue_delay_s)
        finished = (self.last.get(task) or {}).get("finished_at")
        if not finished:
            return earliest
        due = _parse(finished) + timedelta(hours=self.intervals()[task])
        return max(due, earliest)

    def due(self, now: datetime | None = None) -> list[str]:
        moment = now or _parse(self.clock())
        return sorted(t for t in self.intervals() if self.due_at(t) <= moment)

    def status(self) -> dict[str, Any]:
        return {
            "running": self.running,
            "tasks": {
                task: {
                    "interval_h": hours,
                    "next_at": iso(self.due_at(task)),
                    "last": self.last.get(task),
                }
                for task, hours in self.intervals().items()
            },
        }

    def run(self, task: str) -> dict[str, Any]:
        """Run one task now, in this thread, and record it."""
        self.running = task
        start = self.clock()
        self.wiki.writer.call(lambda conn: runs.started(conn, task, start))
        try:
            result = self._work(task)
        except Exception as exc:  # recorded, so a failing task waits its interval too
            log.exception("maintenance task %s failed", task)
            result = {"error": str(exc)}
        finally:
            self.running = None
        end = self.clock()
        self.wiki.writer.call(lambda conn: runs.finished(conn, task, end, result))
        self.last[task] = {"started_at": start, "finished_at": end, "result": result}
        return result

    def _work(self, task: str) -> dict[str, Any]:
        if task == "forget-sweep":
            counts: dict[str, Any] = Sweeper(self.wiki, self.config).sweep().to_dict()["counts"]
            return counts
        if task == "lint":
            reports = lint(self.wiki, self.config, None)
            return {"projects": len(reports), "findings": sum(len(r["findings"]) for r in reports)}
        from ai_memory.retrieval.backfill import backfill

        report = backfill(self.wiki.writer, self.wiki.readers, self.config, 32)
        return {"pages": report.pages, "chunks": report.chunks}

    # -- the loop in serve -----------------------------------------------------------

    def start(self) -> None:
        if self.intervals():
            self._task = asyncio.create_task(self._loop(), name="ai-memory-maintenance")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _loop(self) -> None:
        while True:
            now = _parse(self.clock())
            for task in self.due(now):
                await asyncio.to_thread(self.run, task)
            upcoming = [self.due_at(t) for t in self.intervals()]
            wait = min((t - _parse(self.clock())).total_seconds() for t in upcoming)
            await asyncio.sleep(min(max(wait, 1.0), MAX_SLEEP_S))
