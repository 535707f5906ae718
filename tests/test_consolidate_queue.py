"""The llm_jobs queue on a real SQLite file: idempotent, leased, retried, failed, and it keeps
a pending session's observations from the forget sweep."""

from __future__ import annotations

import sqlite3
from datetime import timedelta

from ai_memory.core.clock import utc_now
from ai_memory.maintenance.sweep import pending_consolidation
from ai_memory.runtime import Runtime
from ai_memory.store import llm_jobs
from ai_memory.store import sweep as sweep_sql

NOW = "2026-01-01T00:00:00.000000Z"


def enqueue(runtime: Runtime, sid: str, count: int) -> sqlite3.Row:
    row: sqlite3.Row = runtime.writer.call(
        lambda conn: llm_jobs.enqueue(conn, "default", "shop", sid, NOW, count=count)
    )
    return row


def test_a_session_at_one_observation_count_is_one_job(runtime: Runtime) -> None:
    first = enqueue(runtime, "s1", 5)
    again = enqueue(runtime, "s1", 5)
    later = enqueue(runtime, "s1", 9)
    assert first["id"] == again["id"] != later["id"]
    counts = runtime.readers.read(llm_jobs.counts)
    assert counts == {"queued": 2, "running": 0, "done": 0, "failed": 0}


def test_a_lease_held_keeps_a_job_and_a_lapsed_one_frees_it(runtime: Runtime) -> None:
    now = utc_now()
    assert not runtime.readers.read(lambda conn: llm_jobs.any_due(conn, now))
    job = enqueue(runtime, "s2", 3)
    assert runtime.readers.read(lambda conn: llm_jobs.any_due(conn, now))
    taken = runtime.writer.call(lambda conn: llm_jobs.claim(conn, now, 60))
    assert taken is not None and taken["id"] == job["id"] and taken["attempts"] == 1
    assert runtime.writer.call(lambda conn: llm_jobs.claim(conn, now, 60)) is None
    assert not runtime.readers.read(lambda conn: llm_jobs.any_due(conn, now))
    held = runtime.writer.call(lambda conn: llm_jobs.claim_one(conn, job["id"], now, 60))
    assert held is None  # a live worker holds it
    later = now + timedelta(seconds=61)
    again = runtime.writer.call(lambda conn: llm_jobs.claim(conn, later, 60))
    assert again is not None and again["attempts"] == 2
    released = runtime.writer.call(lambda conn: llm_jobs.release_all(conn, NOW))
    assert released == 1


def test_a_failing_job_backs_off_then_fails_with_its_error(runtime: Runtime) -> None:
    job = enqueue(runtime, "s3", 1)
    now = utc_now()

    def fail_once(conn: sqlite3.Connection) -> str:
        llm_jobs.claim_one(conn, job["id"], now, 60)
        return llm_jobs.retry_or_fail(
            conn, job["id"], "LlmBadAnswer: no JSON", now, max_attempts=2, backoff_s=10
        )

    assert runtime.writer.call(fail_once) == "queued"
    assert runtime.writer.call(lambda conn: llm_jobs.claim(conn, now, 60)) is None  # backing off
    assert runtime.writer.call(fail_once) == "failed"
    (failed,) = runtime.readers.read(lambda conn: llm_jobs.listed(conn, "failed", 10))
    assert failed["session_id"] == "s3" and failed["attempts"] == 2
    assert failed["last_error"] == "LlmBadAnswer: no JSON"


def test_the_sweep_keeps_the_observations_a_queued_job_needs(runtime: Runtime) -> None:
    session = sweep_sql.SessionObservations("default", "shop", "s4", 3)
    assert not runtime.readers.read(lambda conn: pending_consolidation(conn, session))
    job = enqueue(runtime, "s4", 3)
    assert runtime.readers.read(lambda conn: pending_consolidation(conn, session))
    runtime.writer.call(lambda conn: llm_jobs.finish(conn, job["id"], {}, NOW))
    assert not runtime.readers.read(lambda conn: pending_consolidation(conn, session))
