"""``page_evidence``: which sessions produced or reaffirmed each page version.

``produced``: the session's consolidation wrote this version. ``reaffirmed``: it
said the same again, so the version stands and gains one more witness.
"""

from __future__ import annotations

import sqlite3
from typing import Any

INSERT = """
INSERT INTO page_evidence (page_id, workspace, project, path, session_id, relation, created_at)
SELECT ?, ?, ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM page_evidence WHERE page_id = ? AND session_id = ?)
"""
FOR_PAGE = """
SELECT page_id, session_id, relation, created_at FROM page_evidence
WHERE workspace = ? AND project = ? AND path = ? ORDER BY id
"""


def record(
    conn: sqlite3.Connection,
    page_id: int,
    workspace: str,
    project: str,
    path: str,
    session_id: str,
    relation: str,
    now: str,
) -> None:
    """One row per (page version, session): a repeat adds nothing."""
    conn.execute(
        INSERT, (page_id, workspace, project, path, session_id, relation, now, page_id, session_id)
    )


def for_page(
    conn: sqlite3.Connection, workspace: str, project: str, path: str
) -> list[dict[str, Any]]:
    return [dict(row) for row in conn.execute(FOR_PAGE, (workspace, project, path))]
