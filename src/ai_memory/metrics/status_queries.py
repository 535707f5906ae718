"""The SQL behind the status answer: per-project counts in one pass, open sessions, times."""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any

PER_PROJECT = """
SELECT p.workspace, p.name AS project,
  (SELECT count(*) FROM pages g WHERE g.workspace = p.workspace AND g.project = p.name
     AND g.is_latest = 1 AND g.deleted_at IS NULL) AS pages,
  (SELECT count(*) FROM sessions s WHERE s.workspace = p.workspace AND s.project = p.name)
     AS sessions,
  (SELECT count(*) FROM handoffs h WHERE h.workspace = p.workspace AND h.project = p.name
     AND h.status = 'open') AS open_handoffs
FROM projects p ORDER BY p.workspace, p.name
"""
SESSIONS_OPEN = "SELECT count(*) FROM sessions WHERE ended_at IS NULL"
LAST_WRITE = "SELECT max(at) FROM audit_log"
LAST_MAINTENANCE = "SELECT max(at) FROM audit_log WHERE actor = 'maintenance'"
TOTALS = """
SELECT
  (SELECT count(*) FROM pages WHERE is_latest = 1 AND deleted_at IS NULL) AS pages,
  (SELECT count(*) FROM pages) AS versions,
  (SELECT count(*) FROM sessions) AS sessions,
  (SELECT count(*) FROM observations) AS observations,
  (SELECT count(*) FROM handoffs WHERE status = 'open') AS open_handoffs,
  (SELECT coalesce(sum(length(CAST(body AS BLOB))), 0) FROM pages
     WHERE is_latest = 1 AND deleted_at IS NULL) AS wiki_bytes,
  (SELECT max(version) FROM schema_migrations) AS schema_version
"""


def status_rows(conn: sqlite3.Connection) -> dict[str, Any]:
    return {
        "totals": dict(conn.execute(TOTALS).fetchone()),
        "projects": [dict(row) for row in conn.execute(PER_PROJECT)],
        "sessions_open": conn.execute(SESSIONS_OPEN).fetchone()[0],
        "last_write_at": conn.execute(LAST_WRITE).fetchone()[0],
        "last_maintenance_at": conn.execute(LAST_MAINTENANCE).fetchone()[0],
    }


def unix_time(iso: str | None) -> float:
    return datetime.fromisoformat(iso).timestamp() if iso else 0.0
