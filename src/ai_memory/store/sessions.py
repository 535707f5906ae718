"""Who captured a session in a project: the one lookup hook ingest and messages share."""

from __future__ import annotations

import sqlite3

from ai_memory.core.identity import Scope

SESSION_OWNER = """
SELECT owner FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?
"""


def session_owner(
    conn: sqlite3.Connection, scope: Scope, session_id: str
) -> tuple[bool, int | None]:
    """Whether ``session_id`` was captured in ``scope``, and whose it is (None: the operator)."""
    row = conn.execute(SESSION_OWNER, (scope.workspace, scope.project, session_id)).fetchone()
    return (False, None) if row is None else (True, row["owner"])
