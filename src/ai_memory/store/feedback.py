"""SQL for agents' feedback on pages (helpful, not_helpful, stale, wrong)."""

from __future__ import annotations

import sqlite3

from ai_memory.core.identity import PageRef

INSERT_FEEDBACK = """
INSERT INTO page_feedback (workspace, project, path, page_id, signal, reason, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?)
"""

FEEDBACK_COUNTS = """
SELECT signal, count(*) AS n FROM page_feedback
WHERE workspace = ? AND project = ? AND path = ? GROUP BY signal
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


def feedback_counts(conn: sqlite3.Connection, ref: PageRef) -> dict[str, int]:
    rows = conn.execute(FEEDBACK_COUNTS, (ref.workspace, ref.project, ref.path)).fetchall()
    return {row["signal"]: int(row["n"]) for row in rows}
