"""The reviewed learning loop's tables: pending writes and the per-project watermark.

A pending write is a proposed page body with an immutable snapshot of its target
(the version id and body when it was proposed, NULL for a new page). Only its
decision columns ever change, and only once: the ``state = 'pending'`` guard
makes a second decision a no-op the caller can see.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ai_memory.core.identity import PageRef, Scope

STATES = ("pending", "applied", "rejected", "refused")

INSERT = """
INSERT INTO pending_writes
    (workspace, project, path, session_id, base_page_id, base_body, proposed, rationale,
     state, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?)
"""
COLUMNS = """id, workspace, project, path, session_id, base_page_id, base_body, proposed,
    rationale, state, created_at, decided_at, decided_by, result_page_id, error"""
BY_ID = f"SELECT {COLUMNS} FROM pending_writes WHERE id = ?"
LIST = f"""
SELECT {COLUMNS} FROM pending_writes
WHERE (:state IS NULL OR state = :state)
  AND (:workspace IS NULL OR workspace = :workspace)
  AND (:project IS NULL OR project = :project)
  AND (:before IS NULL OR id < :before)
ORDER BY id DESC LIMIT :limit
"""
DECIDE = """
UPDATE pending_writes
SET state = ?, decided_at = ?, decided_by = ?, result_page_id = ?, error = ?
WHERE id = ? AND state = 'pending'
"""
COUNT_PENDING = "SELECT count(*) FROM pending_writes WHERE state = 'pending'"

WATERMARK = """
SELECT reviewed_until, reviewed_session FROM learning_watermarks
WHERE workspace = ? AND project = ?
"""
ANY_WATERMARK = "SELECT 1 FROM learning_watermarks LIMIT 1"
SET_WATERMARK = """
INSERT INTO learning_watermarks (workspace, project, reviewed_until, reviewed_session)
VALUES (?, ?, ?, ?)
ON CONFLICT (workspace, project) DO UPDATE
SET reviewed_until = excluded.reviewed_until, reviewed_session = excluded.reviewed_session
"""
SEED_WATERMARKS = """
INSERT OR IGNORE INTO learning_watermarks (workspace, project, reviewed_until)
SELECT workspace, name, ? FROM projects
"""
# The marker row of the first start: its presence means the seeding is done.
SEED_MARKER = ("", "")

PROJECTS = "SELECT workspace, name FROM projects ORDER BY workspace, name"
# The oldest completed session after (ended_at, session_id): one per tick, in order.
NEXT_SESSION = """
SELECT session_id, ended_at FROM sessions
WHERE workspace = ? AND project = ? AND ended_at IS NOT NULL
  AND (ended_at, session_id) > (?, ?)
ORDER BY ended_at, session_id LIMIT 1
"""
LATEST_SESSION = """
SELECT session_id, ended_at FROM sessions
WHERE workspace = ? AND project = ? AND ended_at IS NOT NULL AND (? OR owner IS ?)
ORDER BY ended_at DESC, session_id DESC LIMIT 1
"""
SESSION = """
SELECT s.session_id, s.ended_at, p.body AS page_body FROM sessions s
LEFT JOIN pages p ON p.id = s.page_id
WHERE s.workspace = ? AND s.project = ? AND s.session_id = ?
"""
OBSERVATIONS = """
SELECT kind, tool_name, body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? ORDER BY id LIMIT ?
"""
# What the reviewer may edit: the project's latest rules and procedures.
LEARNABLE_PAGES = """
SELECT path, body, pinned FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
  AND (path LIKE '\\_rules/%' ESCAPE '\\' OR path LIKE 'procedures/%')
ORDER BY path LIMIT ?
"""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The target as the proposal saw it; ``page_id`` None: the page did not exist."""

    page_id: int | None
    body: str | None


def insert(
    conn: sqlite3.Connection,
    ref: PageRef,
    *,
    session_id: str | None,
    snapshot: Snapshot,
    proposed: str,
    rationale: str,
    now: str,
) -> int:
    cursor = conn.execute(
        INSERT,
        (
            ref.workspace,
            ref.project,
            ref.path,
            session_id,
            snapshot.page_id,
            snapshot.body,
            proposed,
            rationale,
            now,
        ),
    )
    return int(cursor.lastrowid or 0)


def get(conn: sqlite3.Connection, pending_id: int) -> dict[str, Any] | None:
    row = conn.execute(BY_ID, (pending_id,)).fetchone()
    return _to_dict(row) if row is not None else None


def listed(
    conn: sqlite3.Connection,
    *,
    state: str | None,
    scope: Scope | None,
    limit: int,
    before: int | None = None,
) -> list[dict[str, Any]]:
    """Newest first, bodies included; ``before``: only ids below it (the next page)."""
    params = {
        "state": state,
        "workspace": scope.workspace if scope else None,
        "project": scope.project if scope else None,
        "limit": limit,
        "before": before,
    }
    return [_to_dict(row) for row in conn.execute(LIST, params)]


def decide(
    conn: sqlite3.Connection,
    pending_id: int,
    *,
    state: str,
    now: str,
    by: str,
    result_page_id: int | None = None,
    error: str | None = None,
) -> bool:
    """Record a decision; False when the write was no longer pending."""
    cursor = conn.execute(DECIDE, (state, now, by, result_page_id, error, pending_id))
    return cursor.rowcount == 1


def count_pending(conn: sqlite3.Connection) -> int:
    return int(conn.execute(COUNT_PENDING).fetchone()[0])


def watermark(conn: sqlite3.Connection, scope: Scope) -> tuple[str, str] | None:
    row = conn.execute(WATERMARK, (scope.workspace, scope.project)).fetchone()
    return (str(row[0]), str(row[1])) if row is not None else None


def set_watermark(conn: sqlite3.Connection, scope: Scope, ended_at: str, session_id: str) -> None:
    conn.execute(SET_WATERMARK, (scope.workspace, scope.project, ended_at, session_id))


def seed_watermarks(conn: sqlite3.Connection, now: str) -> bool:
    """On the very first start only, mark every existing project reviewed up to ``now``,
    so an upgrade does not review a project's whole history. True when it seeded."""
    if conn.execute(ANY_WATERMARK).fetchone() is not None:
        return False
    conn.execute(SEED_WATERMARKS, (now,))
    conn.execute(SET_WATERMARK, (*SEED_MARKER, now, ""))
    return True


def projects(conn: sqlite3.Connection) -> list[Scope]:
    return [Scope.of(row[0], row[1]) for row in conn.execute(PROJECTS)]


def next_session(conn: sqlite3.Connection, scope: Scope) -> tuple[str, str] | None:
    """The oldest completed session after the project's watermark (none: from the start)."""
    until, session = watermark(conn, scope) or ("", "")
    row = conn.execute(NEXT_SESSION, (scope.workspace, scope.project, until, session)).fetchone()
    return (str(row[0]), str(row[1])) if row is not None else None


def latest_session(
    conn: sqlite3.Connection, scope: Scope, owner: tuple[bool, int | None] = (True, None)
) -> str | None:
    """The newest completed session; ``owner`` is (every owner's?, whose)."""
    row = conn.execute(LATEST_SESSION, (scope.workspace, scope.project, *owner)).fetchone()
    return str(row[0]) if row is not None else None


def session_material(
    conn: sqlite3.Connection, scope: Scope, session_id: str, most_observations: int
) -> tuple[str | None, list[sqlite3.Row]] | None:
    """A completed session's page body and observations; None when no such session ended."""
    row = conn.execute(SESSION, (scope.workspace, scope.project, session_id)).fetchone()
    if row is None or row["ended_at"] is None:
        return None
    observations = conn.execute(
        OBSERVATIONS, (scope.workspace, scope.project, session_id, most_observations)
    ).fetchall()
    return row["page_body"], observations


def learnable_pages(conn: sqlite3.Connection, scope: Scope, limit: int) -> list[sqlite3.Row]:
    return conn.execute(LEARNABLE_PAGES, (scope.workspace, scope.project, limit)).fetchall()


def _to_dict(row: sqlite3.Row) -> dict[str, Any]:
    return dict(zip(row.keys(), row, strict=True))
