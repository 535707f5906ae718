"""The maintenance cadence: due times, a persisted last run, bounded overdue delay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.identity import Scope
from ai_memory.maintenance.jobs import MaintenanceJobs
from ai_memory.runtime import Runtime
from tests.conftest import ServerProcess

T0 = datetime(2026, 3, 1, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> str:
        return iso(self.now)


def start(data_dir: Path, clock: Clock, **env: str) -> Runtime:
    settings = {f"AI_MEMORY_MAINTENANCE__{k.upper()}": v for k, v in env.items()}
    runtime = Runtime.start(Config.load(data_dir, settings))
    runtime.wiki.clock = clock
    return runtime


def test_cadence_survives_a_restart_and_overdue_work_waits_the_delay(data_dir: Path) -> None:
    clock = Clock()
    runtime = start(data_dir, clock, overdue_delay_s="300", lint_interval_h="0")
    try:
        runtime.wiki.write_page(Scope.of(None, "api").page("notes/a.md"), "# A\n")
        jobs = MaintenanceJobs(runtime.wiki, runtime.config)
        assert list(jobs.intervals()) == ["forget-sweep"]  # lint is off, no embeddings
        assert jobs.due() == []  # never run, but the start delay comes first
        clock.now += timedelta(seconds=301)
        assert jobs.due() == ["forget-sweep"]
        result = jobs.run("forget-sweep")
        assert result["expired"] == 0 and jobs.due() == []
    finally:
        runtime.stop()

    clock.now += timedelta(hours=23)
    runtime = start(data_dir, clock, overdue_delay_s="300", lint_interval_h="0")
    try:
        jobs = MaintenanceJobs(runtime.wiki, runtime.config)
        assert jobs.last["forget-sweep"]["result"]["expired"] == 0  # remembered
        clock.now += timedelta(minutes=30)
        assert jobs.due() == []  # 23.5 h since the last sweep: not due, restart or not
        clock.now += timedelta(minutes=30, seconds=1)
        assert jobs.due() == ["forget-sweep"]
    finally:
        runtime.stop()


def test_a_restart_long_after_the_last_run_waits_only_the_bounded_delay(data_dir: Path) -> None:
    clock = Clock()
    runtime = start(data_dir, clock, overdue_delay_s="120")
    try:
        jobs = MaintenanceJobs(runtime.wiki, runtime.config)
        clock.now += timedelta(seconds=121)
        jobs.run("lint")
    finally:
        runtime.stop()
    clock.now += timedelta(days=10)
    runtime = start(data_dir, clock, overdue_delay_s="120")
    try:
        jobs = MaintenanceJobs(runtime.wiki, runtime.config)
        assert jobs.due() == []
        assert jobs.due_at("lint") == clock.now + timedelta(seconds=120)
        clock.now += timedelta(seconds=120)
        assert jobs.due() == ["forget-sweep", "lint"]
        assert jobs.status()["tasks"]["lint"]["last"]["result"] == {"projects": 0, "findings": 0}
    finally:
        runtime.stop()


def test_serve_shows_the_schedule(server: ServerProcess) -> None:
    with server.client() as client:
        status = client.get("/api/v1/maintenance").json()
    assert status["running"] is None
    assert set(status["tasks"]) == {"forget-sweep", "lint"}
    assert status["tasks"]["lint"]["interval_h"] == 24.0
    assert httpx.get(f"{server.url}/api/v1/maintenance").status_code == 401
    with server.client() as client:
        admin = client.get("/admin/status").json()
    assert set(admin["maintenance"]["tasks"]) == {"forget-sweep", "lint"}
