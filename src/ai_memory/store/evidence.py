"""``page_evidence``: which sessions produced or reaffirmed each page version.

``produced``: the session's consolidation wrote this version. ``reaffirmed``: it
said the same again, so the version stands and gains one more witness.
"""

from __future__ import annotations

import sqlite3

INSERT = """
INSERT INTO page_evidence (page_id, workspace, project, path, session_id, relation, created_at)
SELECT ?, ?, ?, ?, ?, ?, ?
WHERE NOT EXISTS (SELECT 1 FROM page_evidence WHERE page_id = ? AND session_id = ?)
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
