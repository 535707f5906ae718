"""Handoffs: what one session leaves for the next, claimed exactly once.

Claims run inside a writer command, so two agents starting at once can never
both get the same handoff. Manual handoffs come before automatic ones;
automatic ones are matched by working directory. A handoff belongs to the user
whose session or call left it: only they see and claim it, unless it is shared
(``shared = 1``) or an admin asks for every owner's (:class:`Viewer`).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Forbidden, InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.store import pages

AcceptResult = Literal["claimed", "consumed_by_hook", "none_pending"]
MAX_SUMMARY_CHARS = 4000
MAX_CONTENT_CHARS = 32_000

HANDOFF_COLUMNS = (
    "id, workspace, project, origin, status, from_session, from_agent, cwd, summary, content, "
    "created_at, claimed_at, claimed_by_agent, claimed_by_session, claimed_via"
)
INSERT_HANDOFF = """
INSERT INTO handoffs (workspace, project, origin, status, from_session, from_agent, cwd, summary,
    content, created_at, owner, shared)
VALUES (?, ?, ?, 'open', ?, ?, ?, ?, ?, ?, ?, ?)
"""
# Whose handoffs a viewer sees: (every owner?, the viewer's owner id). ``IS`` matches the
# operator's NULL owner too, so a data dir from before users behaves as it did.
VISIBLE = "(? OR owner IS ? OR shared = 1)"
OPEN_AUTOMATIC = """
SELECT id, from_session, cwd, created_at FROM handoffs
WHERE workspace = ? AND project = ? AND origin = 'automatic' AND status = 'open' AND owner IS ?
"""
EXPIRE = "UPDATE handoffs SET status = 'expired' WHERE id = ? AND status = 'open'"
REFRESH_AUTOMATIC = """
UPDATE handoffs SET summary = ?, content = ?
WHERE workspace = ? AND project = ? AND from_session = ? AND origin = 'automatic'
    AND status = 'open'
"""
OPEN_HANDOFFS = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND status = 'open' AND {VISIBLE}
ORDER BY CASE origin WHEN 'manual' THEN 0 ELSE 1 END, created_at DESC, id DESC
"""
# Every owner's: the web UI's list (guarded by its own route).
LIST_HANDOFFS = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND (? IS NULL OR status = ?)
ORDER BY created_at DESC, id DESC LIMIT ?
"""
LIST_VISIBLE = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND (? IS NULL OR status = ?) AND {VISIBLE}
ORDER BY created_at DESC, id DESC LIMIT ?
"""
HANDOFF_BY_ID = (
    f"SELECT {HANDOFF_COLUMNS} FROM handoffs WHERE workspace = ? AND project = ? AND id = ?"
)
VISIBLE_BY_ID = f"{HANDOFF_BY_ID} AND {VISIBLE}"
CLAIM = """
UPDATE handoffs SET status = 'claimed', claimed_at = ?, claimed_by_agent = ?,
    claimed_by_session = ?, claimed_via = ?
WHERE id = ? AND status = 'open'
"""
CANCEL = "UPDATE handoffs SET status = 'cancelled' WHERE id = ? AND status = 'open'"
CONSUMED_BY_HOOK = f"""
SELECT {HANDOFF_COLUMNS} FROM handoffs
WHERE workspace = ? AND project = ? AND status = 'claimed' AND claimed_via = 'hook'
    AND claimed_by_session = ? AND {VISIBLE}
ORDER BY claimed_at DESC LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Whose handoffs a caller sees and claims: their own and shared ones, or with
    ``any_owner`` (admins only) every one."""

    owner: int | None = None
    any_owner: bool = False

    @classmethod
    def of(cls, who: Principal, any_owner: bool = False) -> Viewer:
        if any_owner and not who.admin:
            raise Forbidden(f"user {who.name!r} may not use any_owner: it is for admins")
        return cls(who.owner, any_owner)

    def args(self) -> tuple[bool, int | None]:
        return self.any_owner, self.owner


OPERATOR = Viewer()


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
    owner: int | None = None,
    shared: bool = False,
    clock: Callable[[], str] = now_iso,
) -> Callable[[sqlite3.Connection], dict[str, Any]]:
    """A writer command opening a handoff; a new automatic one expires older ones for its cwd."""
    # Redaction may lengthen the text a little ([REDACTED] for a short secret): room for it.
    content_text = content_json(content, 2 * MAX_CONTENT_CHARS)

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
            owner=owner,
            shared=shared,
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
    owner: int | None = None,
    shared: bool = False,
) -> dict[str, Any]:
    pages.ensure_project(conn, scope, now)
    if origin == "automatic":
        expire_superseded(conn, scope, from_session, cwd, now, owner)
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
            owner,
            int(shared),
        ),
    )
    row = conn.execute(HANDOFF_BY_ID, (scope.workspace, scope.project, cursor.lastrowid)).fetchone()
    return handoff_dict(row)


def refresh_automatic(
    conn: sqlite3.Connection, scope: Scope, from_session: str, *, summary: str, content_text: str
) -> int:
    """The session's own automatic handoff, while still open, told what the session holds
    now (work that reached it after its end); its date stays, so it displaces no newer
    handoff. One already claimed stays as its claimer read it. Returns how many changed."""
    values = (summary[:MAX_SUMMARY_CHARS], content_text, scope.workspace, scope.project)
    return conn.execute(REFRESH_AUTOMATIC, (*values, from_session)).rowcount


def expire_superseded(
    conn: sqlite3.Connection,
    scope: Scope,
    from_session: str | None,
    cwd: str | None,
    now: str | None = None,
    owner: int | None = None,
) -> None:
    """Older automatic handoffs of the same session, or ones a claim would match the same
    directory with (:func:`same_place`, as claiming uses), give way to a new one dated
    ``now``; a newer one stays (an imported past session hands off nothing over it). Only
    the same owner's: one user's session end never expires another's handoff."""
    rows = conn.execute(OPEN_AUTOMATIC, (scope.workspace, scope.project, owner)).fetchall()
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
    viewer: Viewer = OPERATOR,
    clock: Callable[[], str] = now_iso,
) -> Callable[[sqlite3.Connection], tuple[AcceptResult, dict[str, Any] | None]]:
    """A writer command claiming one handoff (the given one, or the best open one) that
    ``viewer`` may see.

    Through the hook it is idempotent per session: a session that already claimed one
    gets that one again. ``claim_new=False`` only looks that up.
    """
    seen = viewer.args()

    def command(conn: sqlite3.Connection) -> tuple[AcceptResult, dict[str, Any] | None]:
        if handoff_id is not None:
            row = conn.execute(
                VISIBLE_BY_ID, (scope.workspace, scope.project, handoff_id, *seen)
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
                    CONSUMED_BY_HOOK, (scope.workspace, scope.project, session_id, *seen)
                ).fetchone()
                if mine is not None:
                    return "claimed", handoff_dict(mine)
            row = best_open(conn, scope, session_id, cwd, viewer) if claim_new else None
            if row is None:
                if session_id:
                    consumed = conn.execute(
                        CONSUMED_BY_HOOK, (scope.workspace, scope.project, session_id, *seen)
                    ).fetchone()
                    if consumed is not None and via == "api":
                        return "consumed_by_hook", handoff_dict(consumed)
                return "none_pending", None
        conn.execute(CLAIM, (clock(), agent, session_id, via, row["id"]))
        claimed = conn.execute(HANDOFF_BY_ID, (scope.workspace, scope.project, row["id"]))
        return "claimed", handoff_dict(claimed.fetchone())

    return command


def consumed_handoff(
    conn: sqlite3.Connection, scope: Scope, session_id: str, viewer: Viewer = OPERATOR
) -> dict[str, Any] | None:
    """The handoff this session's start hook claimed, if any (and ``viewer`` may see it)."""
    args = (scope.workspace, scope.project, session_id, *viewer.args())
    row = conn.execute(CONSUMED_BY_HOOK, args).fetchone()
    return handoff_dict(row) if row is not None else None


def best_open(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str | None,
    cwd: str | None,
    viewer: Viewer = OPERATOR,
) -> sqlite3.Row | None:
    """Manual first (newest), then the newest automatic one left in the same directory."""
    for row in conn.execute(OPEN_HANDOFFS, (scope.workspace, scope.project, *viewer.args())):
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


def content_json(content: Mapping[str, Any] | None, limit: int = MAX_CONTENT_CHARS) -> str:
    try:
        text = json.dumps(dict(content or {}), ensure_ascii=False, default=str)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"handoff content is not JSON: {exc}") from exc
    if len(text) > limit:
        raise InvalidInput(f"handoff content is over {MAX_CONTENT_CHARS} characters")
    return text
