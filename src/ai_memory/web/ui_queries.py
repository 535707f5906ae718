"""The reads only the browser UI makes: recent pages everywhere, by kind, a project's page."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.errors import NotFound
from ai_memory.core.identity import Scope
from ai_memory.hooks.handoffs import LIST_HANDOFFS, handoff_dict
from ai_memory.store import pages
from ai_memory.web import session_queries

NO_CURSOR = 1 << 62
HANDOFFS_SHOWN = 20

# Version ids grow with every write, so id order is write order, and it walks the
# primary key instead of sorting every latest page by time.
RECENT_EVERYWHERE = f"""
SELECT {pages.PAGE_COLUMNS} FROM pages WHERE is_latest = 1
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
PROJECT_COUNTS = """
SELECT (SELECT count(*) FROM pages WHERE workspace = ?1 AND project = ?2) AS versions,
  (SELECT count(*) FROM sessions WHERE workspace = ?1 AND project = ?2) AS sessions,
  (SELECT count(*) FROM handoffs WHERE workspace = ?1 AND project = ?2 AND status = 'open')
    AS open_handoffs
"""

KIND_COUNTS = """
SELECT kind, count(*) AS pages FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 GROUP BY kind ORDER BY kind
"""


def recent_everywhere(conn: sqlite3.Connection, limit: int) -> list[dict[str, Any]]:
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
    conn: sqlite3.Connection, scope: Scope, kind: str, limit: int, sessions: int
) -> dict[str, Any]:
    """Everything the project page shows, in one read: counts, kinds, the newest pages
    (of ``kind`` when given), open handoffs and recent sessions."""
    if not pages.project_exists(conn, scope):
        raise NotFound(f"no project {scope}")
    if kind:
        newest = recent_of_kind(conn, scope, kind, limit)
    else:
        rows = conn.execute(pages.RECENT, (scope.workspace, scope.project, limit)).fetchall()
        newest = [pages.row_to_dict(row, with_body=False) for row in rows]
    handoff_args = (scope.workspace, scope.project, "open", "open", HANDOFFS_SHOWN)
    timeline = session_queries.timeline(conn, scope, NO_CURSOR, sessions)
    kinds = kind_counts(conn, scope)
    counted = conn.execute(PROJECT_COUNTS, (scope.workspace, scope.project)).fetchone()
    return {
        "counts": {"pages": sum(kinds.values()), **counted},
        "kinds": kinds,
        "pages": newest,
        "handoffs": [handoff_dict(row) for row in conn.execute(LIST_HANDOFFS, handoff_args)],
        "sessions": timeline["sessions"],
        "more_sessions": timeline["next_before"] is not None,
    }


def home_page(conn: sqlite3.Connection, recent: int) -> dict[str, Any]:
    """The home page in one read: every project with its page count, totals, recent pages."""
    projects = pages.list_projects(conn)
    totals = {
        "projects": len(projects),
        "pages": sum(p["pages"] for p in projects),
        **conn.execute(HOME_COUNTS).fetchone(),
    }
    return {"counts": totals, "projects": projects, "recent": recent_everywhere(conn, recent)}
