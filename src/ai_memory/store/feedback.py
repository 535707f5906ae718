"""SQL for agents' feedback on pages (helpful, not_helpful, stale, wrong).

Search reads it back in one batch per query (``retrieval.engine``), where it
adjusts a page's authority.
"""

from __future__ import annotations

import sqlite3

from ai_memory.core.identity import PageRef

INSERT_FEEDBACK = """
INSERT INTO page_feedback (workspace, project, path, page_id, signal, reason, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""


def add_feedback(
    conn: sqlite3.Connection,
    ref: PageRef,
    page_id: int | None,
    signal: str,
    reason: str | None,
    now: str,
) -> int:
    cursor = conn.execute(
        INSERT_FEEDBACK,
        (ref.workspace, ref.project, ref.path, page_id, signal, reason, now),
    )
    return int(cursor.lastrowid or 0)
