"""SQL for cross-project messages (migration 16): queue, list, claim once, cancel.

Every state change runs in the writer, so a claim is one ``UPDATE … WHERE status =
'queued'`` in the one writing connection: of any number of concurrent pops exactly
one sees the row still queued. Rows are never deleted here; a claimed or cancelled
message stays as the record of what was sent.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ai_memory.core.errors import Saturated
from ai_memory.core.identity import Scope
from ai_memory.store.pages import audit

ACTOR = "messages"

INSERT = """
INSERT INTO messages (from_workspace, from_project, to_workspace, to_project, to_agent,
    sender_user, sender_session, sender_agent, subject, body, status, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', ?)
"""
QUEUED_COUNT = """
SELECT COUNT(*) AS queued, COALESCE(SUM(sender_user IS ?), 0) AS theirs FROM messages
WHERE to_workspace = ? AND to_project = ? AND status = 'queued'
"""
# Both ends' user names come with the row, so no caller renders an id.
SELECT = """
SELECT m.*, s.name AS sender_name, c.name AS claimed_by_name
FROM messages m
LEFT JOIN users s ON s.id = m.sender_user
LEFT JOIN users c ON c.id = m.claimed_by_user
"""
BY_ID = SELECT + "WHERE m.id = ?"
INBOX = (
    SELECT + "WHERE m.to_workspace = ? AND m.to_project = ? AND (? IS NULL OR m.status = ?) "
    "ORDER BY m.id DESC LIMIT ?"
)
OUTBOX = (
    SELECT + "WHERE m.from_workspace = ? AND m.from_project = ? AND (? IS NULL OR m.status = ?) "
    "ORDER BY m.id DESC LIMIT ?"
)
# Oldest first; a message addressed to an agent kind only reaches that kind.
CANDIDATES = """
SELECT id, from_workspace, from_project FROM messages
WHERE to_workspace = ? AND to_project = ? AND status = 'queued'
  AND (to_agent IS NULL OR to_agent = ?)
ORDER BY id LIMIT 1
"""
CLAIM = """
UPDATE messages SET status = 'claimed', claimed_at = ?, claimed_by_user = ?,
    claimed_by_session = ?, claimed_by_agent = ?
WHERE id = ? AND status = 'queued'
"""
CANCEL = """
UPDATE messages SET status = 'cancelled', cancelled_at = ? WHERE id = ? AND status = 'queued'
"""


@dataclass(frozen=True, slots=True)
class Party:
    """Who acts on a message: the user (None: the operator), their session and agent kind."""

    user: int | None
    session: str | None = None
    agent: str | None = None


@dataclass(frozen=True, slots=True)
class Draft:
    """A message as the sanitizer left it, ready to queue."""

    sender: Scope
    recipient: Scope
    to_agent: str | None
    subject: str
    body: str


def send(
    conn: sqlite3.Connection,
    draft: Draft,
    party: Party,
    *,
    now: str,
    max_queued: int,
    max_theirs: int | None,
) -> dict[str, Any]:
    """Queue ``draft`` unless the recipient's inbox already holds ``max_queued`` messages,
    or ``max_theirs`` from this sender (None: no limit per sender, for admins)."""
    to = draft.recipient
    counts = conn.execute(QUEUED_COUNT, (party.user, to.workspace, to.project)).fetchone()
    queued, theirs = int(counts["queued"]), int(counts["theirs"])
    if queued >= max_queued:
        raise Saturated(
            f"the inbox of project {to} holds {queued} queued messages, the limit of "
            f"{max_queued}; retry once some are popped or cancelled",
            limit=max_queued,
        )
    if max_theirs is not None and theirs >= max_theirs:
        raise Saturated(
            f"you have {theirs} queued messages in the inbox of project {to}, the limit of "
            f"{max_theirs} for one sender; retry once some are popped or cancelled",
            limit=max_theirs,
        )
    row = (
        draft.sender.workspace,
        draft.sender.project,
        to.workspace,
        to.project,
        draft.to_agent,
        party.user,
        party.session,
        party.agent,
        draft.subject,
        draft.body,
        now,
    )
    message_id = int(conn.execute(INSERT, row).lastrowid or 0)
    _audit(conn, now, "message-send", message_id, draft.sender, to)
    return get(conn, message_id) or {}


def get(conn: sqlite3.Connection, message_id: int) -> dict[str, Any] | None:
    found = conn.execute(BY_ID, (message_id,)).fetchone()
    return dict(found) if found is not None else None


def listing(
    conn: sqlite3.Connection, scope: Scope, *, outbox: bool, status: str | None, limit: int
) -> list[dict[str, Any]]:
    """The newest messages to (or from) ``scope``, whichever project is at the other end:
    its sender named both ends when it sent the message."""
    sql = OUTBOX if outbox else INBOX
    args = (scope.workspace, scope.project, status, status, limit)
    return [dict(row) for row in conn.execute(sql, args)]


def claim_next(
    conn: sqlite3.Connection, scope: Scope, party: Party, *, now: str
) -> dict[str, Any] | None:
    """Claim the oldest queued message ``party`` may take; None when there is none."""
    row = conn.execute(CANDIDATES, (scope.workspace, scope.project, party.agent)).fetchone()
    if row is None:
        return None
    args = (now, party.user, party.session, party.agent, row["id"])
    if conn.execute(CLAIM, args).rowcount != 1:  # never claimed twice
        return None
    sender = Scope(row["from_workspace"], row["from_project"])
    _audit(conn, now, "message-pop", int(row["id"]), sender, scope)
    return get(conn, int(row["id"]))


def cancel(conn: sqlite3.Connection, found: dict[str, Any], *, now: str) -> bool:
    """Cancel ``found`` (a row :func:`get` read) if still queued; False when it was claimed
    or cancelled meanwhile."""
    message_id = int(found["id"])
    if conn.execute(CANCEL, (now, message_id)).rowcount != 1:
        return False
    sender = Scope(found["from_workspace"], found["from_project"])
    recipient = Scope(found["to_workspace"], found["to_project"])
    _audit(conn, now, "message-cancel", message_id, sender, recipient)
    return True


def _audit(
    conn: sqlite3.Connection, now: str, action: str, message_id: int, sender: Scope, to: Scope
) -> None:
    """The audit row names the acting user (``pages.audit`` reads it); never the body."""
    detail = {
        "message_id": message_id,
        "workspace": to.workspace,
        "project": to.project,
        "from": str(sender),
    }
    audit(conn, now=now, actor=ACTOR, action=action, detail=detail)
