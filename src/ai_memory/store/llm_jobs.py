"""The durable queue of LLM work (``llm_jobs``): plain SQL, run by the writer or a reader.

A job is one session's work of one kind at one observation count: queuing it again
is a no-op (``INSERT OR IGNORE`` on the unique key). A worker claims a job by setting
its lease; a job whose lease ran out (its worker died) is claimed again. This module
imports nothing of the LLM layer, so the session-end path can queue a job in the
transaction that ends the session.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from ai_memory.core.clock import iso

CONSOLIDATION = "consolidation"
ERROR_CHARS = 500

ENQUEUE = """
INSERT OR IGNORE INTO llm_jobs (kind, workspace, project, session_id, observation_count,
    next_attempt_at, created_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
SESSION_COUNT = """
SELECT count(*) FROM observations WHERE workspace = ? AND project = ? AND session_id = ?
"""
BY_KEY = """
SELECT * FROM llm_jobs WHERE kind = ? AND workspace = ? AND project = ? AND session_id = ?
    AND observation_count = ?
"""
BY_ID = "SELECT * FROM llm_jobs WHERE id = ?"
# The oldest due job: queued and past its backoff, or running with its lease run out.
CLAIM = """
UPDATE llm_jobs SET state = 'running', lease_until = ?, attempts = attempts + 1, updated_at = ?
WHERE id = (
    SELECT id FROM llm_jobs
    WHERE kind = ? AND ((state = 'queued' AND next_attempt_at <= ?)
        OR (state = 'running' AND lease_until < ?))
    ORDER BY next_attempt_at, id LIMIT 1)
RETURNING *
"""
ANY_DUE = """
SELECT 1 FROM llm_jobs
WHERE kind = ? AND ((state = 'queued' AND next_attempt_at <= ?)
    OR (state = 'running' AND lease_until < ?))
LIMIT 1
"""
CLAIM_ONE = """
UPDATE llm_jobs SET state = 'running', lease_until = ?, attempts = attempts + 1, updated_at = ?
WHERE id = ? AND (state IN ('queued', 'failed') OR (state = 'running' AND lease_until < ?))
RETURNING *
"""
# Only one server runs per data dir: at its start, no job can still be running.
RELEASE_ALL = """
UPDATE llm_jobs SET state = 'queued', lease_until = NULL, updated_at = ?
WHERE state = 'running'
"""
FINISH = """
UPDATE llm_jobs SET state = 'done', lease_until = NULL, last_error = NULL, result = ?,
    updated_at = ?
WHERE id = ?
"""
RETRY = """
UPDATE llm_jobs SET state = 'queued', lease_until = NULL, last_error = ?, next_attempt_at = ?,
    updated_at = ?
WHERE id = ?
"""
FAIL = """
UPDATE llm_jobs SET state = 'failed', lease_until = NULL, last_error = ?, updated_at = ?
WHERE id = ?
"""
COUNTS = "SELECT state, count(*) FROM llm_jobs WHERE kind = ? GROUP BY state"
VISIBLE_COUNTS = """
SELECT state, count(*) FROM llm_jobs
WHERE kind = ? AND (workspace || '/' || project) NOT IN (SELECT value FROM json_each(?))
GROUP BY state
"""
LISTED = """
SELECT * FROM llm_jobs WHERE kind = ? AND (? IS NULL OR state = ?)
    AND (workspace || '/' || project) NOT IN (SELECT value FROM json_each(?))
ORDER BY updated_at DESC, id DESC LIMIT ?
"""
PENDING_FOR_SESSION = """
SELECT 1 FROM llm_jobs WHERE workspace = ? AND project = ? AND session_id = ?
    AND state IN ('queued', 'running') LIMIT 1
"""


def observation_count(conn: sqlite3.Connection, workspace: str, project: str, sid: str) -> int:
    return int(conn.execute(SESSION_COUNT, (workspace, project, sid)).fetchone()[0])


def enqueue(
    conn: sqlite3.Connection,
    workspace: str,
    project: str,
    session_id: str,
    now: str,
    *,
    kind: str = CONSOLIDATION,
    count: int | None = None,
) -> sqlite3.Row:
    """Queue the session's job at its current observation count (or ``count``); the job
    already there for that count is returned instead of a second one."""
    if count is None:
        count = observation_count(conn, workspace, project, session_id)
    key = (kind, workspace, project, session_id, count)
    conn.execute(ENQUEUE, (*key, now, now, now))
    row: sqlite3.Row = conn.execute(BY_KEY, key).fetchone()
    return row


def find(
    conn: sqlite3.Connection,
    workspace: str,
    project: str,
    session_id: str,
    count: int,
    kind: str = CONSOLIDATION,
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        BY_KEY, (kind, workspace, project, session_id, count)
    ).fetchone()
    return row


def claim(
    conn: sqlite3.Connection, now: datetime, lease_s: float, kind: str = CONSOLIDATION
) -> sqlite3.Row | None:
    """Take the oldest due job (lease it for ``lease_s``); ``None`` when none is due."""
    at = iso(now)
    lease = iso(now + timedelta(seconds=lease_s))
    row: sqlite3.Row | None = conn.execute(CLAIM, (lease, at, kind, at, at)).fetchone()
    return row


def any_due(conn: sqlite3.Connection, now: datetime, kind: str = CONSOLIDATION) -> bool:
    """Whether :func:`claim` would find a job: a reader asks, so an idle queue costs the
    writer nothing."""
    at = iso(now)
    return conn.execute(ANY_DUE, (kind, at, at)).fetchone() is not None


def claim_one(
    conn: sqlite3.Connection, job_id: int, now: datetime, lease_s: float
) -> sqlite3.Row | None:
    """Take job ``job_id`` now (an on-demand run); ``None`` if a live worker holds it."""
    at = iso(now)
    lease = iso(now + timedelta(seconds=lease_s))
    row: sqlite3.Row | None = conn.execute(CLAIM_ONE, (lease, at, job_id, at)).fetchone()
    return row


def release_all(conn: sqlite3.Connection, now: str) -> int:
    return conn.execute(RELEASE_ALL, (now,)).rowcount


def finish(conn: sqlite3.Connection, job_id: int, result: dict[str, Any], now: str) -> None:
    conn.execute(FINISH, (json.dumps(result, ensure_ascii=False), now, job_id))


def retry_or_fail(
    conn: sqlite3.Connection,
    job_id: int,
    error: str,
    now: datetime,
    *,
    max_attempts: int,
    backoff_s: float,
) -> str:
    """After a failed try: queue it again after a doubling backoff, or, once its tries
    are spent, mark it failed. Returns the new state."""
    row = conn.execute(BY_ID, (job_id,)).fetchone()
    attempts = int(row["attempts"]) if row is not None else max_attempts
    message = error[:ERROR_CHARS]
    if attempts >= max_attempts:
        conn.execute(FAIL, (message, iso(now), job_id))
        return "failed"
    delay = backoff_s * 2 ** max(attempts - 1, 0)
    conn.execute(RETRY, (message, iso(now + timedelta(seconds=delay)), iso(now), job_id))
    return "queued"


def counts(
    conn: sqlite3.Connection, kind: str = CONSOLIDATION, *, hidden_json: str | None = None
) -> dict[str, int]:
    """Jobs by state, leaving out those of the ``workspace/project`` names in
    ``hidden_json`` when it is given."""
    found = {state: 0 for state in ("queued", "running", "done", "failed")}
    if hidden_json is None:
        rows = conn.execute(COUNTS, (kind,))
    else:
        rows = conn.execute(VISIBLE_COUNTS, (kind, hidden_json))
    found.update({row[0]: int(row[1]) for row in rows})
    return found


def listed(
    conn: sqlite3.Connection,
    state: str | None,
    limit: int,
    kind: str = CONSOLIDATION,
    *,
    hidden_json: str = "[]",
) -> list[dict[str, Any]]:
    """The newest jobs, leaving out those of the ``workspace/project`` names in
    ``hidden_json`` before the limit applies, so a caller still gets ``limit`` rows."""
    args = (kind, state, state, hidden_json, limit)
    return [to_dict(row) for row in conn.execute(LISTED, args)]


def pending_for_session(conn: sqlite3.Connection, workspace: str, project: str, sid: str) -> bool:
    """Whether a queued or running job still needs the session's observations."""
    return conn.execute(PENDING_FOR_SESSION, (workspace, project, sid)).fetchone() is not None


def to_dict(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "id": row["id"],
        "kind": row["kind"],
        "workspace": row["workspace"],
        "project": row["project"],
        "session_id": row["session_id"],
        "observation_count": row["observation_count"],
        "state": row["state"],
        "attempts": row["attempts"],
        "next_attempt_at": row["next_attempt_at"],
        "last_error": row["last_error"],
        "result": json.loads(row["result"] or "{}"),
        "created_at": row["created_at"],
        "updated_at": row["updated_at"],
    }
