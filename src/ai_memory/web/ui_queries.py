"""The reads only the browser UI makes: recent pages everywhere, by kind, kind counts."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.identity import Scope
from ai_memory.store import pages

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
