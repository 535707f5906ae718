"""The SQL behind the status answer: per-project counts in one pass, open sessions, times."""

from __future__ import annotations

import sqlite3
from collections import Counter
from datetime import datetime
from typing import Any

from ai_memory.store import identity

# Each count walks an index only (the partial "latest" index, tombstones, sessions, open
# handoffs), never the page rows: status stays cheap at tens of thousands of pages.
# "+is_latest" keeps the planner on the tombstones index.
PROJECTS = "SELECT workspace, name AS project FROM projects ORDER BY workspace, name"
PAGES_BY_PROJECT = """
SELECT workspace, project, count(*) FROM pages WHERE is_latest = 1 GROUP BY workspace, project
"""
TOMBSTONES = "SELECT workspace, project FROM pages WHERE deleted_at IS NOT NULL AND +is_latest = 1"
SESSIONS_BY_PROJECT = (
    "SELECT workspace, project, count(*) FROM sessions GROUP BY workspace, project"
)
HANDOFFS_BY_PROJECT = """
SELECT workspace, project, count(*) FROM handoffs WHERE status = 'open'
GROUP BY workspace, project
"""
SESSIONS_OPEN = "SELECT count(*) FROM sessions WHERE ended_at IS NULL"
LAST_WRITE = "SELECT at FROM audit_log ORDER BY id DESC LIMIT 1"
# The scheduler's own record of its runs, and the newest maintenance change among the
# latest audit rows (bounded: the audit log grows with every write).
LAST_MAINTENANCE = """
SELECT max(at) FROM (
  SELECT max(finished_at) AS at FROM maintenance_runs
  UNION ALL
  SELECT max(at) FROM (SELECT at, actor FROM audit_log ORDER BY id DESC LIMIT 5000)
  WHERE actor = 'maintenance'
)
"""
TOTALS = """
SELECT
  (SELECT count(*) FROM pages) AS versions,
  (SELECT count(*) FROM sessions) AS sessions,
  (SELECT count(*) FROM observations) AS observations,
  (SELECT count(*) FROM handoffs WHERE status = 'open') AS open_handoffs,
  (SELECT max(version) FROM schema_migrations) AS schema_version
"""


def status_rows(conn: sqlite3.Connection) -> dict[str, Any]:
    projects = per_project(conn)  # every page belongs to a project: the total is their sum
    totals = {"pages": sum(p["pages"] for p in projects), **conn.execute(TOTALS).fetchone()}
    return {
        "totals": totals,
        "projects": projects,
        "sessions_open": conn.execute(SESSIONS_OPEN).fetchone()[0],
        "last_write_at": last_write(conn),
        "last_maintenance_at": conn.execute(LAST_MAINTENANCE).fetchone()[0],
        "identities": identity.counts(conn),
    }


def last_write(conn: sqlite3.Connection) -> str | None:
    """When the newest audited write happened; None on a data dir never written."""
    row = conn.execute(LAST_WRITE).fetchone()
    return str(row[0]) if row is not None else None


def per_project(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    def grouped(sql: str) -> dict[tuple[str, str], int]:
        return {(row[0], row[1]): int(row[2]) for row in conn.execute(sql)}

    pages = grouped(PAGES_BY_PROJECT)
    tombstones = Counter((row[0], row[1]) for row in conn.execute(TOMBSTONES))  # a few rows
    sessions, handoffs = grouped(SESSIONS_BY_PROJECT), grouped(HANDOFFS_BY_PROJECT)
    result = []
    for row in conn.execute(PROJECTS):
        key = (row[0], row[1])
        result.append(
            {
                "workspace": key[0],
                "project": key[1],
                "pages": pages.get(key, 0) - tombstones.get(key, 0),
                "sessions": sessions.get(key, 0),
                "open_handoffs": handoffs.get(key, 0),
            }
        )
    return result


def unix_time(iso: str | None) -> float:
    return datetime.fromisoformat(iso).timestamp() if iso else 0.0
