"""The reads behind the sessions timeline and the session view.

A viewer sees raw events (a session's first prompt, its observations) only of the
sessions they own; admins and the operator see every owner's. Of another user's
session the timeline shows its page's title, agent, time and outcome, and its id only
once its session page exists (the page, and so its path, is readable project content):
the id of a session still running is its owner's alone.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

from ai_memory.core.errors import Forbidden, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.web.access import NOTHING, hidden_json, not_hidden

TITLE_CHARS = 120
UNNAMED = "another user's session"
# The failed-calls condition is the one of the partial index observations_failed
# (migration 10): keep the two the same, or the count reads every event again.
SESSION_FIELDS = """
s.id, s.workspace, s.project, s.session_id, s.agent, s.owner, s.started_at, s.last_event_at,
s.ended_at, s.end_reason, s.page_id, p.path AS page_path, p.title AS page_title,
(SELECT substr(o.body, 1, 300) FROM observations o WHERE o.workspace = s.workspace
   AND o.project = s.project AND o.session_id = s.session_id AND o.kind = 'user-prompt'
   ORDER BY o.id LIMIT 1) AS first_prompt,
(SELECT count(*) FROM observations o WHERE o.workspace = s.workspace
   AND o.project = s.project AND o.session_id = s.session_id) AS events,
(SELECT count(*) FROM observations o WHERE o.workspace = s.workspace
   AND o.project = s.project AND o.session_id = s.session_id AND o.kind = 'post-tool-use'
   AND o.meta LIKE '%"failed": true%') AS failures
"""
TIMELINE_ALL = f"""
SELECT {SESSION_FIELDS} FROM sessions s LEFT JOIN pages p ON p.id = s.page_id
WHERE s.id < ? ORDER BY s.id DESC LIMIT ?
"""
TIMELINE_VISIBLE = f"""
SELECT {SESSION_FIELDS} FROM sessions s LEFT JOIN pages p ON p.id = s.page_id
WHERE s.id < ? AND {not_hidden("s")} ORDER BY s.id DESC LIMIT ?
"""
TIMELINE_PROJECT = f"""
SELECT {SESSION_FIELDS} FROM sessions s LEFT JOIN pages p ON p.id = s.page_id
WHERE s.workspace = ? AND s.project = ? AND s.id < ? ORDER BY s.id DESC LIMIT ?
"""
ONE_SESSION = f"""
SELECT {SESSION_FIELDS} FROM sessions s LEFT JOIN pages p ON p.id = s.page_id
WHERE s.workspace = ? AND s.project = ? AND s.session_id = ?
"""
OBSERVATIONS = """
SELECT id, kind, agent, tool_name, body, meta, created_at FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND id > ? ORDER BY id LIMIT ?
"""


def timeline(
    conn: sqlite3.Connection,
    scope: Scope | None,
    before: int,
    limit: int,
    hide: frozenset[Scope] = NOTHING,
    viewer: Principal | None = None,
) -> dict[str, Any]:
    """One page of sessions, newest first; ``next_before`` pages on (None at the end).
    Everywhere leaves out the projects in ``hide``."""
    if scope is None and hide:
        rows = conn.execute(TIMELINE_VISIBLE, (before, hidden_json(hide), limit + 1)).fetchall()
    elif scope is None:
        rows = conn.execute(TIMELINE_ALL, (before, limit + 1)).fetchall()
    else:
        params = (scope.workspace, scope.project, before, limit + 1)
        rows = conn.execute(TIMELINE_PROJECT, params).fetchall()
    sessions = [session_row(row, sees_raw(viewer, row)) for row in rows[:limit]]
    more = len(rows) > limit
    return {"sessions": sessions, "next_before": sessions[-1]["id"] if more else None}


def one_session(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str,
    after: int,
    limit: int,
    viewer: Principal | None = None,
) -> dict[str, Any]:
    row = conn.execute(ONE_SESSION, (scope.workspace, scope.project, session_id)).fetchone()
    if row is None:
        raise NotFound(f"no session {session_id} in {scope}")
    if not sees_raw(viewer, row):
        name = viewer.name if viewer else ""
        raise Forbidden(
            f"user {name!r} may not read the events of another user's session {session_id}"
        )
    params = (scope.workspace, scope.project, session_id, after, limit + 1)
    rows = [dict(r) for r in conn.execute(OBSERVATIONS, params).fetchall()]
    more = len(rows) > limit
    rows = rows[:limit]
    return {
        "session": session_row(row),
        "observations": rows,
        "next_after": rows[-1]["id"] if more else None,
    }


def sees_raw(viewer: Principal | None, row: sqlite3.Row) -> bool:
    """Whether ``viewer`` may see the session's raw events (None: the operator)."""
    return viewer is None or viewer.sees_every_owner() or viewer.owns(row["owner"])


def session_row(row: sqlite3.Row, raw: bool = True) -> dict[str, Any]:
    data = dict(row)
    data["readable"] = raw
    if not raw:
        data["first_prompt"] = None
        if data["page_path"] is None:
            data["session_id"] = None
    title = data["page_title"] or _first_line(data["first_prompt"]) or data["session_id"] or UNNAMED
    data["title"] = title[:TITLE_CHARS]
    end = data["ended_at"] or data["last_event_at"]
    data["duration"] = duration(data["started_at"], end)
    data["outcome"] = outcome(data)
    return data


def outcome(session: dict[str, Any]) -> str:
    base = "open" if session["ended_at"] is None else session["end_reason"] or "ended"
    failures = session["failures"]
    if not failures:
        return base
    return f"{base}, {failures} failed call{'s' if failures > 1 else ''}"


def duration(start: str, end: str) -> str:
    try:
        seconds = int((datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds())
    except ValueError:
        return ""
    if seconds < 60:
        return f"{max(seconds, 0)} s"
    if seconds < 3600:
        return f"{seconds // 60} min"
    return f"{seconds // 3600} h {seconds % 3600 // 60} min"


def _first_line(text: str | None) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""
