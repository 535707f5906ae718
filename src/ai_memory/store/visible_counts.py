"""The status counts as a user sees them: the projects they may not read left out.

The operator's counts stay the plain ``store.counts`` ones. Sessions,
observations and open handoffs count only the user's own (and shared
handoffs), as their lists show them.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.store.counts import counted_owner, counts, index_versions, project_counts
from ai_memory.store.project_access import hidden_json, not_hidden

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
# The same for a user's own rows (the owner is the second parameter).
VISIBLE_OWN_COUNTS = {
    "sessions": f"SELECT count(*) FROM sessions WHERE {not_hidden()} AND owner IS ?",
    "observations": f"SELECT count(*) FROM observations WHERE {not_hidden()} AND owner IS ?",
    "open_handoffs": f"SELECT count(*) FROM handoffs WHERE status = 'open' AND {not_hidden()} "
    "AND (owner IS ? OR shared = 1)",
}


def visible_counts(
    conn: sqlite3.Connection,
    scope: Scope | None,
    hide: frozenset[Scope],
    who: Principal | None = None,
) -> dict[str, Any]:
    """``store.counts`` with every row of a project in ``hide`` left out (the plain counts,
    with no extra condition on any scan, when nothing is hidden)."""
    if not hide:
        return counts(conn, scope, who)
    own, owner = counted_owner(who)
    param = hidden_json(hide)
    result: dict[str, Any] = {}
    for name, sql in VISIBLE_COUNTS.items():
        if own and name in VISIBLE_OWN_COUNTS:
            result[name] = conn.execute(VISIBLE_OWN_COUNTS[name], (param, owner)).fetchone()[0]
        else:
            result[name] = conn.execute(sql, (param,)).fetchone()[0]
    result.update(index_versions(conn))
    if scope is not None:
        result["project"] = project_counts(conn, scope, who)
    return result
