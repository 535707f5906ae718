"""Who may store a hook event: WRITE on its project, and a session that is theirs.

Checked inside the writer command that stores the events, so the answer and the
rows agree: a refused event leaves nothing behind, and a session id one user
started can never gain another user's observations.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, Principal
from ai_memory.store import project_access
from ai_memory.store.sessions import session_owner

if TYPE_CHECKING:
    from ai_memory.hooks.ingest import HookEvent

# Every project's row of one session id, the first stored first (index sessions_by_id):
# a session id belongs to whoever stored it first, in whichever project.
SESSION_ROWS = """
SELECT id, workspace, project, owner, ended_at IS NULL AND end_reason IS NULL AS open
FROM sessions WHERE session_id = ? ORDER BY started_at, id
"""
SessionKey = tuple[str, str, str]  # (workspace, project, session_id)


def refusals(
    conn: sqlite3.Connection,
    events: Sequence[HookEvent],
    who: Principal,
    open_rows: dict[SessionKey, int] | None = None,
) -> dict[int, str]:
    """Why each refused event (by index) may not be stored; empty when all may.

    One lookup per session (its unique index): the operator's path reads no grants. Keyed
    by names, not by :class:`Scope`: a batch's hundreds of events hash plain strings.
    ``open_rows`` gets the row id of each session found open in its project (the same
    read), which a later event only moves forward."""
    writable: dict[tuple[str, str, Scope | None], str | None] = {}
    owners: dict[SessionKey, str | None] = {}
    refused: dict[int, str] = {}
    for index, event in enumerate(events):
        scope, asked = event.scope, event.asked
        target = (scope.workspace, scope.project, asked)
        if target not in writable:
            writable[target] = _write_problem(conn, who, scope, asked)
        key = (scope.workspace, scope.project, event.observation.session_id)
        if key not in owners:
            owners[key] = _session_problem(conn, who, scope, key[2], open_rows)
        problem = writable[target] or owners[key]
        if problem is not None:
            refused[index] = problem
    return refused


def _write_problem(
    conn: sqlite3.Connection, who: Principal, scope: Scope, asked: Scope | None
) -> str | None:
    """Why ``who`` may not write to ``scope``, naming it as ``asked`` for (an old name is
    not told where it leads)."""
    if project_access.access(conn, who, scope) >= Access.WRITE:
        return None
    return f"user {who.name!r} may not write to project {asked or scope}"


def _session_problem(
    conn: sqlite3.Connection,
    who: Principal,
    scope: Scope,
    session_id: str,
    open_rows: dict[SessionKey, int] | None = None,
) -> str | None:
    """Refused when another user stored ``session_id`` first (in any project), or holds
    its row in ``scope``: a session id read off a page cannot be taken into a second
    project. The other project is not named (it may be one ``who`` may not read)."""
    rows = conn.execute(SESSION_ROWS, (session_id,)).fetchall()
    here = [r for r in rows if (r["workspace"], r["project"]) == (scope.workspace, scope.project)]
    if open_rows is not None and here and here[0]["open"]:
        open_rows[(scope.workspace, scope.project, session_id)] = here[0]["id"]
    if here and not who.owns(here[0]["owner"]):
        return f"session {session_id} in {scope} is another user's: {who.name!r} may not add to it"
    if rows and not who.owns(rows[0]["owner"]):
        return f"session {session_id} is another user's: {who.name!r} may not add to it"
    return None


def packet_access(
    conn: sqlite3.Connection, who: Principal, scope: Scope, asked: Scope | None = None
) -> tuple[frozenset[Scope], bool]:
    """For a session-start packet: the projects hidden from ``who`` and whether they may
    write to ``scope`` (claim a handoff); refused (403) when they may not even read it,
    naming the project as ``asked`` for (an old name is not told where it leads)."""
    project_access.authorize(conn, who, scope, Access.READ, asked=asked)
    if who.admin:
        return frozenset(), True
    may_write = project_access.access(conn, who, scope) >= Access.WRITE
    return project_access.hidden_projects(conn, who), may_write


def owns_session(conn: sqlite3.Connection, who: Principal, scope: Scope, session_id: str) -> bool:
    """Whether ``who`` captured ``session_id`` (a session not stored yet counts as theirs)."""
    captured, owner = session_owner(conn, scope, session_id)
    return not captured or who.owns(owner)
