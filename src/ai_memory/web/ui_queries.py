"""The reads only the browser UI makes: recent pages everywhere, by kind, a project's page."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.errors import NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.hooks.handoffs import LIST_HANDOFFS, LIST_VISIBLE, handoff_dict
from ai_memory.store import pages
from ai_memory.web import session_queries
from ai_memory.web.access import NOTHING, hidden_json, not_hidden, visible

NO_CURSOR = 1 << 62
HANDOFFS_SHOWN = 20

# Version ids grow with every write, so id order is write order, and it walks the
# primary key instead of sorting every latest page by time.
RECENT_EVERYWHERE = f"""
SELECT {pages.PAGE_COLUMNS} FROM pages WHERE is_latest = 1
ORDER BY id DESC LIMIT ?
"""

# The same for a user with projects they may not read (the operator's stays the one above).
RECENT_VISIBLE = f"""
SELECT {pages.PAGE_COLUMNS} FROM pages WHERE is_latest = 1 AND {not_hidden()}
ORDER BY id DESC LIMIT ?
"""

RECENT_OF_KIND = f"""
SELECT {pages.PAGE_COLUMNS} FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND kind = ?
ORDER BY created_at DESC, id DESC LIMIT ?
"""

# Only what the pages show: counting every observation or link (a scan of the whole
# table) would make the home and project pages slower as capture piles up.
HOME_COUNTS = """
SELECT (SELECT count(*) FROM sessions) AS sessions,
  (SELECT count(*) FROM handoffs WHERE status = 'open') AS open_handoffs
"""
# A user who is not an admin: the projects they may read, their own sessions, and the open
# handoffs they may claim (their own and shared ones), as the lists show them.
_READABLE = "(workspace || '/' || project) NOT IN (SELECT value FROM json_each(?1))"
HOME_COUNTS_VISIBLE = f"""
SELECT (SELECT count(*) FROM sessions WHERE {_READABLE} AND owner IS ?2) AS sessions,
  (SELECT count(*) FROM handoffs WHERE status = 'open' AND {_READABLE}
    AND (owner IS ?2 OR shared = 1)) AS open_handoffs
"""
PROJECT_COUNTS = """
SELECT (SELECT count(*) FROM pages WHERE workspace = ?1 AND project = ?2) AS versions,
  (SELECT count(*) FROM sessions WHERE workspace = ?1 AND project = ?2) AS sessions,
  (SELECT count(*) FROM handoffs WHERE workspace = ?1 AND project = ?2 AND status = 'open')
    AS open_handoffs
"""
PROJECT_COUNTS_OWN = """
SELECT (SELECT count(*) FROM pages WHERE workspace = ?1 AND project = ?2) AS versions,
  (SELECT count(*) FROM sessions WHERE workspace = ?1 AND project = ?2 AND owner IS ?3)
    AS sessions,
  (SELECT count(*) FROM handoffs WHERE workspace = ?1 AND project = ?2 AND status = 'open'
    AND (owner IS ?3 OR shared = 1)) AS open_handoffs
"""

KIND_COUNTS = """
SELECT kind, count(*) AS pages FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 GROUP BY kind ORDER BY kind
"""


def recent_everywhere(
    conn: sqlite3.Connection, limit: int, hide: frozenset[Scope] = NOTHING
) -> list[dict[str, Any]]:
    if hide:
        rows = conn.execute(RECENT_VISIBLE, (hidden_json(hide), limit)).fetchall()
    else:
        rows = conn.execute(RECENT_EVERYWHERE, (limit,)).fetchall()
    return [pages.row_to_dict(row, with_body=False) for row in rows]


def recent_of_kind(
    conn: sqlite3.Connection, scope: Scope, kind: str, limit: int
) -> list[dict[str, Any]]:
    rows = conn.execute(RECENT_OF_KIND, (scope.workspace, scope.project, kind, limit)).fetchall()
    return [pages.row_to_dict(row, with_body=False) for row in rows]


def kind_counts(conn: sqlite3.Connection, scope: Scope) -> dict[str, int]:
    rows = conn.execute(KIND_COUNTS, (scope.workspace, scope.project))
    return {row["kind"]: row["pages"] for row in rows}


def project_page(
    conn: sqlite3.Connection,
    scope: Scope,
    kind: str,
    limit: int,
    sessions: int,
    viewer: Principal | None = None,
) -> dict[str, Any]:
    """Everything the project page shows, in one read: counts, kinds, the newest pages
    (of ``kind`` when given), open handoffs and recent sessions. A ``viewer`` who is
    not an admin sees their own and shared handoffs, and only their sessions' prompts."""
    if not pages.project_exists(conn, scope):
        raise NotFound(f"no project {scope}")
    if kind:
        newest = recent_of_kind(conn, scope, kind, limit)
    else:
        rows = conn.execute(pages.RECENT, (scope.workspace, scope.project, limit)).fetchall()
        newest = [pages.row_to_dict(row, with_body=False) for row in rows]
    ws, project = scope.workspace, scope.project
    if viewer is None or viewer.sees_every_owner():
        handoffs = conn.execute(LIST_HANDOFFS, (ws, project, "open", "open", HANDOFFS_SHOWN))
        counted = conn.execute(PROJECT_COUNTS, (ws, project)).fetchone()
    else:
        args = (ws, project, "open", "open", False, viewer.owner, HANDOFFS_SHOWN)
        handoffs = conn.execute(LIST_VISIBLE, args)
        counted = conn.execute(PROJECT_COUNTS_OWN, (ws, project, viewer.owner)).fetchone()
    timeline = session_queries.timeline(conn, scope, NO_CURSOR, sessions, NOTHING, viewer)
    kinds = kind_counts(conn, scope)
    return {
        "counts": {"pages": sum(kinds.values()), **counted},
        "kinds": kinds,
        "pages": newest,
        "handoffs": [handoff_dict(row) for row in handoffs],
        "sessions": timeline["sessions"],
        "more_sessions": timeline["next_before"] is not None,
    }


def home_page(
    conn: sqlite3.Connection,
    recent: int,
    hide: frozenset[Scope] = NOTHING,
    viewer: Principal | None = None,
) -> dict[str, Any]:
    """The home page in one read: every project with its page count, totals, recent pages
    (of the projects the viewer may read: ``hide`` holds the others; a ``viewer`` who is not
    an admin counts their own sessions and the handoffs they may claim)."""
    projects = visible(pages.list_projects(conn), hide, "name")
    counted = (
        conn.execute(HOME_COUNTS)
        if viewer is None or viewer.sees_every_owner()
        else conn.execute(HOME_COUNTS_VISIBLE, (hidden_json(hide), viewer.owner))
    )
    totals = {
        "projects": len(projects),
        "pages": sum(p["pages"] for p in projects),
        **counted.fetchone(),
    }
    return {
        "counts": totals,
        "projects": projects,
        "recent": recent_everywhere(conn, recent, hide),
    }
