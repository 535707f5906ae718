"""Counts of what the index holds, for status answers on every surface."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.identity import Scope
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


def counts(conn: sqlite3.Connection, scope: Scope | None) -> dict[str, Any]:
    result: dict[str, Any] = {
        name: conn.execute(sql).fetchone()[0] for name, sql in GLOBAL_COUNTS.items()
    }
    result["schema_version"] = current_version(conn)
    result["data_version"] = conn.execute("SELECT coalesce(max(id), 0) FROM audit_log").fetchone()[
        0
    ]
    if scope is not None:
        result["project"] = project_counts(conn, scope)
    return result


def project_counts(conn: sqlite3.Connection, scope: Scope) -> dict[str, Any]:
    """One project's counts alone (no scan of the whole database)."""
    params = (scope.workspace, scope.project)
    return {
        "workspace": scope.workspace,
        "project": scope.project,
        **{name: conn.execute(sql, params).fetchone()[0] for name, sql in PROJECT_COUNTS.items()},
    }
