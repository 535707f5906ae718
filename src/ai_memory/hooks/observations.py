"""Reading what a session captured, page by page (for the API and the MCP tools).

Raw observations are their owner's: a user reads those of the sessions their key
captured (admins and the operator: every session's). The session *page* is project
content and stays readable to everyone who may read the project.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ai_memory.core.errors import Forbidden, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.store.readers import ReaderPool

SESSION_COLUMNS = "session_id, agent, cwd, started_at, last_event_at, ended_at, end_reason, page_id"
# (every owner's?, the reader's owner id): ``IS`` matches the operator's NULL owner too.
OWNED = "(? OR owner IS ?)"
SESSION = f"""
SELECT {SESSION_COLUMNS}, {OWNED} AS readable FROM sessions
WHERE workspace = ? AND project = ? AND session_id = ?
"""
NEWEST_OTHER_SESSION = f"""
SELECT {SESSION_COLUMNS} FROM sessions
WHERE workspace = ? AND project = ? AND (? IS NULL OR session_id != ?) AND {OWNED}
ORDER BY last_event_at DESC, id DESC LIMIT 1
"""
RECENT_SESSIONS = f"""
SELECT {SESSION_COLUMNS},
    (SELECT count(*) FROM observations o WHERE o.workspace = s.workspace
        AND o.project = s.project AND o.session_id = s.session_id) AS observations
FROM sessions s WHERE workspace = ? AND project = ? AND {OWNED}
ORDER BY last_event_at DESC, id DESC LIMIT ?
"""
PAGE = """
SELECT id, kind, agent, tool_name, body, meta, created_at FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND id < ?
ORDER BY id DESC LIMIT ?
"""
COUNT = "SELECT count(*) FROM observations WHERE workspace = ? AND project = ? AND session_id = ?"
MAX_PAGE = 200


def read_observations(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str | None = None,
    *,
    exclude_session: str | None = None,
    before_id: int | None = None,
    limit: int = 50,
    max_body_chars: int | None = None,
    who: Principal | None = None,
) -> dict[str, Any]:
    """One page of a session's observations, newest first.

    Without ``session_id`` it reads the newest session of the project other
    than ``exclude_session`` (the caller's own) that ``who`` owns (default: the
    operator, who reads every one). ``next_before_id`` pages on.
    """
    reader = owner_args(who)
    if session_id is not None:
        row = conn.execute(
            SESSION, (*reader, scope.workspace, scope.project, session_id)
        ).fetchone()
        if row is not None and not row["readable"]:
            name = who.name if who is not None else "root"
            raise Forbidden(
                f"user {name!r} may not read the observations of session {session_id} in "
                f"{scope}: another user captured it (its page is readable)"
            )
    else:
        row = conn.execute(
            NEWEST_OTHER_SESSION,
            (scope.workspace, scope.project, exclude_session, exclude_session, *reader),
        ).fetchone()
    if row is None:
        which = f"session {session_id}" if session_id else "other session"
        raise NotFound(f"no {which} in {scope}")
    sid = row["session_id"]
    limit = max(1, min(limit, MAX_PAGE))
    cursor = before_id if before_id is not None else 1 << 62
    rows = conn.execute(PAGE, (scope.workspace, scope.project, sid, cursor, limit + 1)).fetchall()
    more = len(rows) > limit
    rows = rows[:limit]
    total = conn.execute(COUNT, (scope.workspace, scope.project, sid)).fetchone()[0]
    session = dict(row)
    session.pop("readable", None)
    return {
        "workspace": scope.workspace,
        "project": scope.project,
        "session": session,
        "total": total,
        "observations": [_observation(r, max_body_chars) for r in rows],
        "next_before_id": rows[-1]["id"] if more and rows else None,
    }


async def session_observations(
    readers: ReaderPool,
    scope: Scope,
    session_id: str | None = None,
    *,
    exclude_session: str | None = None,
    before_id: int | None = None,
    limit: int = 50,
    max_body_chars: int | None = None,
    who: Principal | None = None,
) -> dict[str, Any]:
    """Async form of :func:`read_observations` on the reader pool."""
    return await readers.aread(
        lambda conn: read_observations(
            conn,
            scope,
            session_id,
            exclude_session=exclude_session,
            before_id=before_id,
            limit=limit,
            max_body_chars=max_body_chars,
            who=who,
        )
    )


async def recent_sessions(
    readers: ReaderPool, scope: Scope, limit: int = 20, who: Principal | None = None
) -> list[dict[str, Any]]:
    """The newest sessions of ``scope`` whose observations ``who`` may read."""
    args = (scope.workspace, scope.project, *owner_args(who), max(1, min(limit, MAX_PAGE)))
    return await readers.aread(lambda conn: [dict(r) for r in conn.execute(RECENT_SESSIONS, args)])


def require_own_session(
    conn: sqlite3.Connection, who: Principal | None, scope: Scope, session_id: str
) -> None:
    """403 unless ``who`` may hand on ``session_id``'s raw observations (to a page or a
    provider): their own session; admins and the operator: any."""
    every, owner = owner_args(who)
    row = conn.execute(SESSION, (every, owner, scope.workspace, scope.project, session_id))
    found = row.fetchone()
    if found is not None and not found["readable"] and who is not None:
        raise Forbidden(
            f"user {who.name!r} may not use session {session_id} in {scope}: "
            "another user captured it"
        )


def owner_args(who: Principal | None) -> tuple[bool, int | None]:
    """The :data:`OWNED` parameters: every session for the operator and admins."""
    if who is None or who.sees_every_owner():
        return True, None
    return False, who.owner


def _observation(row: sqlite3.Row, max_body_chars: int | None) -> dict[str, Any]:
    data = dict(row)
    try:
        data["meta"] = json.loads(row["meta"])
    except ValueError:
        data["meta"] = {}
    if max_body_chars is not None and len(data["body"]) > max_body_chars:
        data["body"] = data["body"][:max_body_chars] + "…"
        data["truncated"] = True
    return data
