"""Handoffs for the API and MCP surfaces: leave, list, claim and cancel one.

Each takes the :class:`~ai_memory.hooks.handoffs.Viewer` of its caller, so a user
sees and claims only their own handoffs and shared ones (an admin with
``any_owner``: every one); a handoff they may not see is answered as missing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

import anyio.to_thread

from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.hooks.handoffs import (
    CANCEL,
    HANDOFF_BY_ID,
    LIST_VISIBLE,
    MAX_CONTENT_CHARS,
    MAX_SUMMARY_CHARS,
    OPERATOR,
    VISIBLE_BY_ID,
    Viewer,
    claim_command,
    content_json,
    handoff_dict,
    open_command,
)
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer

STATUSES = (None, "open", "claimed", "cancelled", "expired")


async def begin_handoff(
    writer: Writer,
    scope: Scope,
    summary: str,
    *,
    content: Mapping[str, Any] | None = None,
    from_agent: str | None = None,
    from_session: str | None = None,
    cwd: str | None = None,
    owner: int | None = None,
    shared: bool = False,
    timeout: float = 10.0,
    sanitizer: Sanitizer | None = None,
) -> dict[str, Any]:
    """Open a manual handoff for the next agent of ``scope``; returns the stored handoff.

    Everything in it is captured text, sanitized like a hook event (in a worker
    thread): it is stored, and delivered in the next session-start packet. It belongs
    to ``owner``; ``shared`` publishes it to everyone who may read the project.
    """
    summary = _check_summary(summary)
    content_json(content)  # refused as sent (too big, not JSON), before redaction
    clean = await anyio.to_thread.run_sync(
        _sanitized, sanitizer or Sanitizer(), summary, content, from_agent, from_session, cwd
    )
    command = open_command(scope, origin="manual", owner=owner, shared=shared, **clean)
    return await writer.run(command, timeout=timeout)


def _sanitized(
    sanitizer: Sanitizer,
    summary: str,
    content: Mapping[str, Any] | None,
    from_agent: str | None,
    from_session: str | None,
    cwd: str | None,
) -> dict[str, Any]:
    tree = sanitizer.tree(dict(content or {}), MAX_CONTENT_CHARS)
    return {
        "summary": sanitizer.clean(summary, MAX_SUMMARY_CHARS * 4),
        "content": tree if isinstance(tree, dict) else {},
        "from_agent": sanitizer.clean(from_agent, 200) if from_agent else None,
        "from_session": sanitizer.session_id(from_session) if from_session else None,
        "cwd": sanitizer.clean(cwd, 4096) if cwd else None,
    }


async def list_handoffs(
    readers: ReaderPool,
    scope: Scope,
    *,
    status: str | None = "open",
    limit: int = 20,
    viewer: Viewer = OPERATOR,
) -> list[dict[str, Any]]:
    """Handoffs of ``scope`` ``viewer`` may see, newest first; ``status=None``: every status."""
    if status not in STATUSES:
        raise InvalidInput(f"status {status!r} is not open, claimed, cancelled or expired")
    where = (scope.workspace, scope.project, status, status, *viewer.args())
    args = (*where, max(1, min(limit, 200)))

    def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        return [handoff_dict(row) for row in conn.execute(LIST_VISIBLE, args)]

    return await readers.aread(query)


async def accept_handoff(
    writer: Writer,
    scope: Scope,
    handoff_id: int | None = None,
    *,
    agent: str | None = None,
    session_id: str | None = None,
    cwd: str | None = None,
    viewer: Viewer = OPERATOR,
    timeout: float = 10.0,
    sanitizer: Sanitizer | None = None,
) -> dict[str, Any]:
    """Claim ``handoff_id`` (or the best open one) exactly once.

    Returns ``{"result": "claimed" | "consumed_by_hook" | "none_pending", "handoff": …}``;
    ``consumed_by_hook`` means the session-start hook already delivered it.
    """
    agent, session_id = await anyio.to_thread.run_sync(
        _claimant, sanitizer or Sanitizer(), agent, session_id
    )
    command = claim_command(
        scope,
        agent=agent,
        session_id=session_id,
        cwd=cwd,
        via="api",
        handoff_id=handoff_id,
        viewer=viewer,
    )
    result, handoff = await writer.run(command, timeout=timeout)
    return {"result": result, "handoff": handoff}


async def cancel_handoff(
    writer: Writer,
    scope: Scope,
    handoff_id: int,
    *,
    viewer: Viewer = OPERATOR,
    timeout: float = 10.0,
) -> dict[str, Any]:
    """Cancel an open handoff; raise NotFound / InvalidInput when it is missing or not open."""
    args = (scope.workspace, scope.project, handoff_id)

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        row = conn.execute(VISIBLE_BY_ID, (*args, *viewer.args())).fetchone()
        if row is None:
            raise NotFound(f"no handoff {handoff_id} in {scope}")
        if conn.execute(CANCEL, (handoff_id,)).rowcount == 0:
            raise InvalidInput(f"handoff {handoff_id} is {row['status']}, not open")
        return handoff_dict(conn.execute(HANDOFF_BY_ID, args).fetchone())

    return await writer.run(command, timeout=timeout)


def _claimant(
    sanitizer: Sanitizer, agent: str | None, session_id: str | None
) -> tuple[str | None, str | None]:
    """The claiming agent and session as stored: one holding a secret is replaced."""
    if agent and sanitizer.holds_secret(agent):
        agent = "redacted"
    if session_id and sanitizer.holds_secret(session_id):
        session_id = sanitizer.session_id(session_id)
    return agent, session_id


def _check_summary(summary: str) -> str:
    if not isinstance(summary, str) or not summary.strip():
        raise InvalidInput("a handoff needs a non-empty summary")
    if len(summary) > MAX_SUMMARY_CHARS:
        raise InvalidInput(f"the summary is over {MAX_SUMMARY_CHARS} characters")
    return summary.strip()
