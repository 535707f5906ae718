"""SQL for agents' feedback on pages (helpful, not_helpful, stale, wrong).

Feedback is recorded against the page version it was given on: salience and
lint read only the feedback of a page's latest version, so a rewrite leaves the
old version's flags behind. Every record is in the audit log.
"""

from __future__ import annotations

import sqlite3

from ai_memory.core.identity import PageRef
from ai_memory.store.pages import audit

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
    feedback_id = int(cursor.lastrowid or 0)
    detail = {"page_id": page_id, "signal": signal, "feedback_id": feedback_id}
    audit(conn, now=now, actor="mcp", action="feedback", ref=ref, detail=detail)
    return feedback_id


LATEST_SIGNALS = """
SELECT f.signal FROM page_feedback f JOIN pages p ON p.id = f.page_id
WHERE p.workspace = ? AND p.project = ? AND p.path = ? AND p.is_latest = 1 ORDER BY f.id
"""


def latest_signals(conn: sqlite3.Connection, ref: PageRef) -> list[str]:
    """The feedback on the page's latest version, oldest first."""
    return [r[0] for r in conn.execute(LATEST_SIGNALS, (ref.workspace, ref.project, ref.path))]
