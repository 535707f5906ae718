"""Counts of what the index holds, for status answers on every surface.

A user who is not an admin counts what their lists show: their own sessions and
observations, and the open handoffs they may claim (their own and shared ones).
The operator and admins count every row with the same SQL as before users existed.
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.store.migrations import current_version

GLOBAL_COUNTS = {
    "workspaces": "SELECT count(*) FROM workspaces",
    "projects": "SELECT count(*) FROM projects",
    "pages": "SELECT count(*) FROM pages WHERE is_latest = 1",
    "versions": "SELECT count(*) FROM pages",
    "links": "SELECT count(*) FROM links",
    "entities": "SELECT count(DISTINCT norm) FROM entities",
    "sessions": "SELECT count(*) FROM sessions",
    "observations": "SELECT count(*) FROM observations",
    "open_handoffs": "SELECT count(*) FROM handoffs WHERE status = 'open'",
}

PROJECT_COUNTS = {
    "pages": "SELECT count(*) FROM pages WHERE workspace = ? AND project = ? AND is_latest = 1",
    "versions": "SELECT count(*) FROM pages WHERE workspace = ? AND project = ?",
    "sessions": "SELECT count(*) FROM sessions WHERE workspace = ? AND project = ?",
    "observations": "SELECT count(*) FROM observations WHERE workspace = ? AND project = ?",
    "open_handoffs": "SELECT count(*) FROM handoffs WHERE workspace = ? AND project = ? "
    "AND status = 'open'",
}

DATA_VERSION = "SELECT coalesce(max(id), 0) FROM audit_log"

# A user's own rows (the owner is the last parameter): what their session, observation and
# handoff lists show.
OWN_GLOBAL_COUNTS = {
    "sessions": "SELECT count(*) FROM sessions WHERE owner IS ?",
    "observations": "SELECT count(*) FROM observations WHERE owner IS ?",
    "open_handoffs": "SELECT count(*) FROM handoffs WHERE status = 'open' "
    "AND (owner IS ? OR shared = 1)",
}
OWN_PROJECT_COUNTS = {
    "sessions": "SELECT count(*) FROM sessions WHERE workspace = ? AND project = ? AND owner IS ?",
    "observations": "SELECT count(*) FROM observations WHERE workspace = ? AND project = ? "
    "AND owner IS ?",
    "open_handoffs": "SELECT count(*) FROM handoffs WHERE workspace = ? AND project = ? "
    "AND status = 'open' AND (owner IS ? OR shared = 1)",
}


def counted_owner(who: Principal | None) -> tuple[bool, int | None]:
    """(whether only one owner's rows count, that owner): every owner for admins."""
    if who is None or who.sees_every_owner():
        return False, None
    return True, who.owner


def counts(
    conn: sqlite3.Connection, scope: Scope | None, who: Principal | None = None
) -> dict[str, Any]:
    result = _counted(conn, GLOBAL_COUNTS, OWN_GLOBAL_COUNTS, (), who)
    result.update(index_versions(conn))
    if scope is not None:
        result["project"] = project_counts(conn, scope, who)
    return result


def index_versions(conn: sqlite3.Connection) -> dict[str, int]:
    """The schema and data versions every status answer carries, whatever it counts."""
    data_version = conn.execute(DATA_VERSION).fetchone()[0]
    return {"schema_version": current_version(conn), "data_version": data_version}


def project_counts(
    conn: sqlite3.Connection, scope: Scope, who: Principal | None = None
) -> dict[str, Any]:
    """One project's counts alone (no scan of the whole database)."""
    params = (scope.workspace, scope.project)
    counted = _counted(conn, PROJECT_COUNTS, OWN_PROJECT_COUNTS, params, who)
    return {"workspace": scope.workspace, "project": scope.project, **counted}


def _counted(
    conn: sqlite3.Connection,
    plain: dict[str, str],
    owned: dict[str, str],
    params: tuple[str, ...],
    who: Principal | None,
) -> dict[str, Any]:
    """Each count of ``plain``; the owner-scoped one of ``owned`` for a user who is not an
    admin (the same statement count either way)."""
    own, owner = counted_owner(who)
    result: dict[str, Any] = {}
    for name, sql in plain.items():
        if own and name in owned:
            result[name] = conn.execute(owned[name], (*params, owner)).fetchone()[0]
        else:
            result[name] = conn.execute(sql, params).fetchone()[0]
    return result
