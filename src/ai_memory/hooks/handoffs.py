"""Handoffs: what one session leaves for the next, claimed exactly once.

Claims run inside a writer command, so two agents starting at once can never
both get the same handoff. Manual handoffs come before automatic ones;
automatic ones are matched by working directory.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import anyio.to_thread

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.store import pages
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer

AcceptResult = Literal["claimed", "consumed_by_hook", "none_pending"]
MAX_SUMMARY_CHARS = 4000
MAX_CONTENT_CHARS = 32_000

HANDOFF_COLUMNS = (
    "id, workspace, project, origin, status, from_session, from_agent, cwd, summary, content, "
    "created_at, claimed_at, claimed_by_agent, claimed_by_session, claimed_via"
)
INSERT_HANDOFF = """
INSERT INTO handoffs (workspace, project, origin, status, from_session, from_agent, cwd, summary,
    content, created_at)
VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?)
"""
OPEN_AUTOMATIC = """
SELECT id, from_session, cwd, created_at FROM handoffs
WHERE workspace = ? AND project = ? AND origin = 'automatic' AND status = 'open'
"""
EXPIRE = "UPDATE handoffs SET status = 'expired' WHERE id = ? AND status = 'open'"
OPEN_HANDOFFS = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND status = 'open'
ORDER BY CASE origin WHEN 'manual' THEN 0 ELSE 1 END, created_at DESC, id DESC
"""
LIST_HANDOFFS = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND (? IS NULL OR status = ?)
ORDER BY created_at DESC, id DESC LIMIT ?
"""
HANDOFF_BY_ID = (
    f"SELECT {HANDOFF_COLUMNS} FROM handoffs WHERE workspace = ? AND project = ? AND id = ?"
)
CLAIM = """
UPDATE handoffs SET status = 'claimed', claimed_at = ?, claimed_by_agent = ?,
    claimed_by_session = ?, claimed_via = ?
WHERE id = ? AND status = 'open'
"""
CANCEL = "UPDATE handoffs SET status = 'cancelled' WHERE id = ? AND status = 'open'"
CONSUMED_BY_HOOK = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND status = 'claimed' AND claimed_via = 'hook'
    AND claimed_by_session = ?
ORDER BY claimed_at DESC LIMIT 1
"""


def handoff_dict(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    try:
        data["content"] = json.loads(row["content"])
    except ValueError:
        data["content"] = {}
    return data


def open_command(
    scope: Scope,
    *,
    origin: Literal["manual", "automatic"],
    summary: str,
    content: Mapping[str, Any] | None = None,
    from_session: str | None = None,
    from_agent: str | None = None,
    cwd: str | None = None,
    clock: Callable[[], str] = now_iso,
) -> Callable[[sqlite3.Connection], dict[str, Any]]:
    """A writer command opening a handoff; a new automatic one expires older ones for its cwd."""
    # Redaction may lengthen the text a little ([REDACTED] for a short secret): room for it.
    content_text = _content_json(content, 2 * MAX_CONTENT_CHARS)

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        return insert_handoff(
            conn,
            scope,
            origin=origin,
            summary=summary,
            content_text=content_text,
            from_session=from_session,
            from_agent=from_agent,
            cwd=cwd,
            now=clock(),
        )

    return command


def insert_handoff(
    conn: sqlite3.Connection,
    scope: Scope,
    *,
    origin: str,
    summary: str,
    content_text: str,
    from_session: str | None,
    from_agent: str | None,
    cwd: str | None,
    now: str,
) -> dict[str, Any]:
    pages.ensure_project(conn, scope, now)
    if origin == "automatic":
        expire_superseded(conn, scope, from_session, cwd, now)
    cursor = conn.execute(
        INSERT_HANDOFF,
        (
            scope.workspace,
            scope.project,
            origin,
            from_session,
            from_agent,
            cwd,
            summary[:MAX_SUMMARY_CHARS],
            content_text,
            now,
        ),
    )
    row = conn.execute(HANDOFF_BY_ID, (scope.workspace, scope.project, cursor.lastrowid)).fetchone()
    return handoff_dict(row)


def expire_superseded(
    conn: sqlite3.Connection,
    scope: Scope,
    from_session: str | None,
    cwd: str | None,
    now: str | None = None,
) -> None:
    """Older automatic handoffs of the same session, or ones a claim would match the same
    directory with (:func:`same_place`, as claiming uses), give way to a new one dated
    ``now``; a newer one stays (an imported past session hands off nothing over it)."""
    rows = conn.execute(OPEN_AUTOMATIC, (scope.workspace, scope.project)).fetchall()
    stale = [
        (row["id"],)
        for row in rows
        if (now is None or row["created_at"] <= now)
        and ((from_session and row["from_session"] == from_session) or same_place(row["cwd"], cwd))
    ]
    conn.executemany(EXPIRE, stale)


def claim_command(
    scope: Scope,
    *,
    agent: str | None,
    session_id: str | None,
    cwd: str | None,
    via: Literal["hook", "api"],
    handoff_id: int | None = None,
    claim_new: bool = True,
    clock: Callable[[], str] = now_iso,
) -> Callable[[sqlite3.Connection], tuple[AcceptResult, dict[str, Any] | None]]:
    """A writer command claiming one handoff (the given one, or the best open one).

    Through the hook it is idempotent per session: a session that already claimed one
    gets that one again. ``claim_new=False`` only looks that up.
    """

    def command(conn: sqlite3.Connection) -> tuple[AcceptResult, dict[str, Any] | None]:
        if handoff_id is not None:
            row = conn.execute(
                HANDOFF_BY_ID, (scope.workspace, scope.project, handoff_id)
            ).fetchone()
            if row is None:
                raise NotFound(f"no handoff {handoff_id} in {scope}")
            if row["status"] == "claimed" and row["claimed_via"] == "hook":
                return "consumed_by_hook", handoff_dict(row)
            if row["status"] != "open":
                raise InvalidInput(f"handoff {handoff_id} is {row['status']}, not open")
        else:
            if via == "hook" and session_id:
                mine = conn.execute(
                    CONSUMED_BY_HOOK, (scope.workspace, scope.project, session_id)
                ).fetchone()
                if mine is not None:
                    return "claimed", handoff_dict(mine)
            row = best_open(conn, scope, session_id, cwd) if claim_new else None
            if row is None:
                if session_id:
                    consumed = conn.execute(
                        CONSUMED_BY_HOOK, (scope.workspace, scope.project, session_id)
                    ).fetchone()
                    if consumed is not None and via == "api":
                        return "consumed_by_hook", handoff_dict(consumed)
                return "none_pending", None
        conn.execute(CLAIM, (clock(), agent, session_id, via, row["id"]))
        claimed = conn.execute(HANDOFF_BY_ID, (scope.workspace, scope.project, row["id"]))
        return "claimed", handoff_dict(claimed.fetchone())

    return command


def consumed_handoff(
    conn: sqlite3.Connection, scope: Scope, session_id: str
) -> dict[str, Any] | None:
    """The handoff this session's start hook claimed, if any."""
    row = conn.execute(CONSUMED_BY_HOOK, (scope.workspace, scope.project, session_id)).fetchone()
    return handoff_dict(row) if row is not None else None


def best_open(
    conn: sqlite3.Connection, scope: Scope, session_id: str | None, cwd: str | None
) -> sqlite3.Row | None:
    """Manual first (newest), then the newest automatic one left in the same directory."""
    for row in conn.execute(OPEN_HANDOFFS, (scope.workspace, scope.project)):
        if session_id and row["from_session"] == session_id:
            continue
        if row["origin"] == "manual" or same_place(row["cwd"], cwd):
            found: sqlite3.Row = row
            return found
    return None


def same_place(left: str | None, right: str | None) -> bool:
    """Directories match when equal or one contains the other (a subfolder of the checkout)."""
    if not left or not right:
        return True
    a, b = left.rstrip("/") + "/", right.rstrip("/") + "/"
    return a.startswith(b) or b.startswith(a)


# -- plain functions for the API and MCP surfaces -----------------------------------


async def begin_handoff(
    writer: Writer,
    scope: Scope,
    summary: str,
    *,
    content: Mapping[str, Any] | None = None,
    from_agent: str | None = None,
    from_session: str | None = None,
    cwd: str | None = None,
    timeout: float = 10.0,
    redact_patterns: Sequence[str] = (),
) -> dict[str, Any]:
    """Open a manual handoff for the next agent of ``scope``; returns the stored handoff.

    Everything in it is captured text, sanitized like a hook event (in a worker
    thread): it is stored, and delivered in the next session-start packet.
    """
    summary = _check_summary(summary)
    _content_json(content)  # refused as sent (too big, not JSON), before redaction
    clean = await anyio.to_thread.run_sync(
        _sanitized, redact_patterns, summary, content, from_agent, from_session, cwd
    )
    command = open_command(scope, origin="manual", **clean)
    return await writer.run(command, timeout=timeout)


def _sanitized(
    redact_patterns: Sequence[str],
    summary: str,
    content: Mapping[str, Any] | None,
    from_agent: str | None,
    from_session: str | None,
    cwd: str | None,
) -> dict[str, Any]:
    sanitizer = Sanitizer(redact_patterns)  # RE2 caches the compiled patterns
    tree = sanitizer.tree(dict(content or {}), MAX_CONTENT_CHARS)
    return {
        "summary": sanitizer.clean(summary, MAX_SUMMARY_CHARS * 4),
        "content": tree if isinstance(tree, dict) else {},
        "from_agent": sanitizer.clean(from_agent, 200) if from_agent else None,
        "from_session": sanitizer.session_id(from_session) if from_session else None,
        "cwd": sanitizer.clean(cwd, 4096) if cwd else None,
    }


async def list_handoffs(
    readers: ReaderPool, scope: Scope, *, status: str | None = "open", limit: int = 20
) -> list[dict[str, Any]]:
    """Handoffs of ``scope``, newest first; ``status=None`` lists every status."""
    if status not in (None, "open", "claimed", "cancelled", "expired"):
        raise InvalidInput(f"status {status!r} is not open, claimed, cancelled or expired")
    args = (scope.workspace, scope.project, status, status, max(1, min(limit, 200)))

    def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        return [handoff_dict(row) for row in conn.execute(LIST_HANDOFFS, args)]

    return await readers.aread(query)


async def accept_handoff(
    writer: Writer,
    scope: Scope,
    handoff_id: int | None = None,
    *,
    agent: str | None = None,
    session_id: str | None = None,
    cwd: str | None = None,
    timeout: float = 10.0,
) -> dict[str, Any]:
    """Claim ``handoff_id`` (or the best open one) exactly once.

    Returns ``{"result": "claimed" | "consumed_by_hook" | "none_pending", "handoff": …}``;
    ``consumed_by_hook`` means the session-start hook already delivered it.
    """
    agent, session_id = await anyio.to_thread.run_sync(_claimant, agent, session_id)
    command = claim_command(
        scope, agent=agent, session_id=session_id, cwd=cwd, via="api", handoff_id=handoff_id
    )
    result, handoff = await writer.run(command, timeout=timeout)
    return {"result": result, "handoff": handoff}


async def cancel_handoff(
    writer: Writer, scope: Scope, handoff_id: int, *, timeout: float = 10.0
) -> dict[str, Any]:
    """Cancel an open handoff; raise NotFound / InvalidInput when it is missing or not open."""

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        row = conn.execute(HANDOFF_BY_ID, (scope.workspace, scope.project, handoff_id)).fetchone()
        if row is None:
            raise NotFound(f"no handoff {handoff_id} in {scope}")
        if conn.execute(CANCEL, (handoff_id,)).rowcount == 0:
            raise InvalidInput(f"handoff {handoff_id} is {row['status']}, not open")
        updated = conn.execute(HANDOFF_BY_ID, (scope.workspace, scope.project, handoff_id))
        return handoff_dict(updated.fetchone())

    return await writer.run(command, timeout=timeout)


def _claimant(agent: str | None, session_id: str | None) -> tuple[str | None, str | None]:
    """The claiming agent and session as stored: one holding a secret is replaced."""
    sanitizer = Sanitizer()
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


def _content_json(content: Mapping[str, Any] | None, limit: int = MAX_CONTENT_CHARS) -> str:
    try:
        text = json.dumps(dict(content or {}), ensure_ascii=False, default=str)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"handoff content is not JSON: {exc}") from exc
    if len(text) > limit:
        raise InvalidInput(f"handoff content is over {MAX_CONTENT_CHARS} characters")
    return text
