"""The status counts as a user sees them: the projects they may not read left out.

Only callers with something hidden come here; the operator's counts stay the
plain ``store.counts`` ones (no extra condition on any scan).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.identity import Scope
from ai_memory.store.counts import counts, project_counts
from ai_memory.web.access import hidden_json, not_hidden

_PROJECT = "(workspace || '/' || name) NOT IN (SELECT value FROM json_each(?))"
VISIBLE_COUNTS = {
    "workspaces": f"SELECT count(DISTINCT workspace) FROM projects WHERE {_PROJECT}",
    "projects": f"SELECT count(*) FROM projects WHERE {_PROJECT}",
    "pages": f"SELECT count(*) FROM pages WHERE is_latest = 1 AND {not_hidden()}",
    "versions": f"SELECT count(*) FROM pages WHERE {not_hidden()}",
    "links": f"SELECT count(*) FROM links WHERE {not_hidden()}",
    "entities": f"SELECT count(DISTINCT norm) FROM entities WHERE {not_hidden()}",
    "sessions": f"SELECT count(*) FROM sessions WHERE {not_hidden()}",
    "observations": f"SELECT count(*) FROM observations WHERE {not_hidden()}",
    "open_handoffs": f"SELECT count(*) FROM handoffs WHERE status = 'open' AND {not_hidden()}",
}


def visible_counts(
    conn: sqlite3.Connection, scope: Scope | None, hide: frozenset[Scope]
) -> dict[str, Any]:
    """``store.counts`` with every row of a project in ``hide`` left out."""
    result = counts(conn, None)
    param = (hidden_json(hide),)
    for name, sql in VISIBLE_COUNTS.items():
        result[name] = conn.execute(sql, param).fetchone()[0]
    if scope is not None:
        result["project"] = project_counts(conn, scope)
    return result
