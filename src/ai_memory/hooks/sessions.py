"""Ending a session: its page, its row and its automatic handoff commit in one transaction."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.core.identity import Scope
from ai_memory.hooks.handoffs import insert_handoff, refresh_automatic
from ai_memory.hooks.session_page import SESSION_STATS, SessionDigest, read_digest, render_page
from ai_memory.store import llm_jobs
from ai_memory.store.sessions import SESSION_OWNER
from ai_memory.wiki.wiki import Wiki

MARK_ENDED = """
UPDATE sessions SET ended_at = coalesce(ended_at, ?), end_reason = coalesce(end_reason, ?),
    page_id = coalesce(?, page_id)
WHERE workspace = ? AND project = ? AND session_id = ?
"""
IDLE_SESSIONS = """
SELECT s.workspace, s.project, s.session_id, (
    SELECT coalesce(max(o.id), 0) FROM observations o WHERE o.workspace = s.workspace
        AND o.project = s.project AND o.session_id = s.session_id)
FROM sessions s WHERE s.ended_at IS NULL AND s.last_event_at < ? ORDER BY s.last_event_at LIMIT ?
"""
SESSION_ENDED = """
SELECT ended_at IS NOT NULL FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?
"""
UNWRITTEN_PAGES = """
SELECT s.workspace, s.project, s.session_id FROM sessions s
WHERE s.ended_at IS NOT NULL AND s.page_id IS NULL AND EXISTS (
    SELECT 1 FROM observations o WHERE o.workspace = s.workspace AND o.project = s.project
        AND o.session_id = s.session_id
        AND o.kind IN ('user-prompt', 'pre-tool-use', 'post-tool-use', 'stop'))
ORDER BY s.ended_at LIMIT ?
"""
PAGE_UNWRITTEN = """
SELECT 1 FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?
    AND ended_at IS NOT NULL AND page_id IS NULL
"""
SESSION_PAGE = """
SELECT page_id FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?
"""
# A session that only started and ended (a health check, `claude mcp list`) leaves nothing.
# The observation index is contentless: a removal repeats the text it indexed.
DROP_EMPTY_FTS = """
INSERT INTO observations_fts(observations_fts, rowid, body)
SELECT 'delete', id, fts_text(CASE WHEN coalesce(tool_name, '') != ''
    THEN tool_name || ' ' || body ELSE body END)
FROM observations WHERE workspace = ? AND project = ? AND session_id = ?
"""
DROP_EMPTY_OBSERVATIONS = (
    "DELETE FROM observations WHERE workspace = ? AND project = ? AND session_id = ?"
)
DROP_EMPTY_SESSION = "DELETE FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?"
NEWEST_OPEN_FOR_AGENT = """
SELECT session_id FROM sessions
WHERE workspace = ? AND project = ? AND ended_at IS NULL AND (? IS NULL OR agent = ?)
ORDER BY last_event_at DESC LIMIT 1
"""


class StaleSession(AiMemoryError):
    """More observations arrived while the page was being built; build it again."""

    code = "stale_session"


class IdleEndRefused(AiMemoryError):
    """The session moved on (an event, or its real end) after it was found idle."""

    code = "idle_end_refused"


@dataclass(frozen=True, slots=True)
class SessionKey:
    workspace: str
    project: str
    session_id: str

    @property
    def scope(self) -> Scope:
        return Scope(self.workspace, self.project)


@dataclass(frozen=True, slots=True)
class IdleSession:
    """A session found idle, with the state it was found in: its idle end is a
    compare-and-set on that state."""

    key: SessionKey
    last_observation_id: int


@dataclass(frozen=True, slots=True)
class EndResult:
    key: SessionKey
    page_path: str | None
    page_id: int | None
    handoff_id: int | None


def end_session(
    wiki: Wiki,
    key: SessionKey,
    *,
    reason: str = "session-end",
    recent_limit: int = 50,
    attempts: int = 3,
    clock: Callable[[], str] = now_iso,
    expect: int | None = None,
    consolidate: bool = False,
    page_only: bool = False,
    if_unwritten: bool = False,
) -> EndResult | None:
    """Write the session page and hand off; ``None`` if the session is unknown.
    ``page_only``: write the page of an ended session again and nothing else (no
    handoff, no consolidation), unless its page was never written: then this is its end.
    ``if_unwritten``: nothing, if the session has its page by the time this runs.

    Runs in a worker thread: the digest is read from a reader, the page is
    built here, and the writer commits page + session row + handoff together.
    ``expect`` (an idle end) is the last observation id seen when the session was
    found idle; if the session has moved on since, nothing is done (``None``).
    ``consolidate`` queues the session's consolidation job in the same transaction.
    """
    for attempt in range(attempts):
        digest = wiki.readers.read(
            lambda conn: read_digest(conn, key.scope, key.session_id, recent_limit)
        )
        if digest is None or (page_only and digest.ended_at is None):
            return None  # unknown, or a page rewrite for a session that was reopened since
        if expect is not None and (digest.ended_at or digest.last_observation_id != expect):
            return None
        check = attempt < attempts - 1
        command = end_command(
            wiki,
            key,
            digest,
            reason,
            clock,
            check=check,
            expect=expect,
            consolidate=consolidate,
            page_only=page_only,
            if_unwritten=if_unwritten,
        )
        try:
            result = wiki.writer.call(command, timeout=wiki.write_timeout)
        except StaleSession:
            continue
        except IdleEndRefused:
            return None
        if result.page_path is not None and wiki.checkpointer is not None:
            wiki.checkpointer.notify(key.scope.page(result.page_path).relpath)
        return result
    return None


def end_command(
    wiki: Wiki,
    key: SessionKey,
    digest: SessionDigest,
    reason: str,
    clock: Callable[[], str] = now_iso,
    *,
    check: bool = True,
    expect: int | None = None,
    consolidate: bool = False,
    page_only: bool = False,
    if_unwritten: bool = False,
) -> Callable[[sqlite3.Connection], EndResult]:
    """The writer command ending the session as ``digest`` saw it.

    With ``expect`` it raises :class:`IdleEndRefused` unless the session is still open
    with ``expect`` as its last observation: a real end that came in between wins.
    """
    now = clock()
    ended_at = digest.ended_at or now
    page_command = None
    path = f"sessions/{key.session_id}.md"
    if digest.has_work:
        body, meta = render_page(digest, ended_at)
        page_command = wiki.write_command(key.scope.page(path), body, meta, actor="hooks")

    def command(conn: sqlite3.Connection) -> EndResult:
        ids = (key.workspace, key.project, key.session_id)
        last_id = int(conn.execute(SESSION_STATS, ids).fetchone()[1])
        if expect is not None and (last_id != expect or _ended(conn, ids)):
            raise IdleEndRefused("the session moved on after it was found idle")
        if check and last_id != digest.last_observation_id:
            raise StaleSession("new observations arrived")
        if page_only and not _ended(conn, ids):
            return EndResult(key, None, None, None)  # reopened since: its end writes the page
        if if_unwritten and session_page_id(conn, key) is not None:
            return EndResult(key, None, None, None)  # an end that was running wrote it
        # A rewrite of a page that was never written (its end's tries ran out) is that end.
        handing_off = not page_only or session_page_id(conn, key) is None
        page_id = None
        handoff_id = None
        if page_command is not None:
            page_id = page_command(conn).page_id
            summary = f"{digest.title} — {digest.summary}"
            content_text = json.dumps(_handoff_content(digest, path), ensure_ascii=False)
            if handing_off:
                handoff = insert_handoff(
                    conn,
                    key.scope,
                    origin="automatic",
                    summary=summary,
                    content_text=content_text,
                    from_session=key.session_id,
                    from_agent=digest.agent,
                    cwd=digest.cwd,
                    now=now,
                    owner=session_owner(conn, ids),  # private to its owner until shared
                )
                handoff_id = int(handoff["id"])
                if consolidate:  # a plain insert: the LLM layer is the server's, not the hook's
                    llm_jobs.enqueue(conn, key.workspace, key.project, key.session_id, now)
            else:  # late word of it: the open handoff tells of it, dated as it was
                refresh_automatic(
                    conn, key.scope, key.session_id, summary=summary, content_text=content_text
                )
        elif not digest.has_work:
            for statement in (DROP_EMPTY_FTS, DROP_EMPTY_OBSERVATIONS, DROP_EMPTY_SESSION):
                conn.execute(statement, ids)
            return EndResult(key, None, None, None)
        conn.execute(MARK_ENDED, (now, reason, page_id, key.workspace, key.project, key.session_id))
        return EndResult(key, path if page_id else None, page_id, handoff_id)

    return command


def _handoff_content(digest: SessionDigest, path: str) -> dict[str, Any]:
    return {
        "session_id": digest.session_id,
        "agent": digest.agent,
        "page": path,
        "title": digest.title,
        "last_prompts": [p[:600] for p in digest.prompts[-3:]],
        "files": digest.files[:20],
        "tools": dict(digest.tools[:10]),
        "last_assistant_message": (digest.last_assistant or "")[:1500] or None,
        "next_steps": digest.next_steps,
        "open_questions": digest.open_questions,
        "decisions": digest.decisions[:5],
        "failures": [c.text[:200] for c in digest.commands if c.failed][-3:],
    }


def _ended(conn: sqlite3.Connection, ids: tuple[str, str, str]) -> bool:
    row = conn.execute(SESSION_ENDED, ids).fetchone()
    return row is None or bool(row[0])


def idle_sessions(conn: sqlite3.Connection, before: str, limit: int = 100) -> list[IdleSession]:
    """Open sessions silent since ``before``, each with the state its idle end expects."""
    rows = conn.execute(IDLE_SESSIONS, (before, limit))
    return [IdleSession(SessionKey(*row[:3]), int(row[3])) for row in rows]


def newest_open_session(conn: sqlite3.Connection, scope: Scope, agent: str | None) -> str | None:
    row = conn.execute(
        NEWEST_OPEN_FOR_AGENT, (scope.workspace, scope.project, agent, agent)
    ).fetchone()
    return str(row[0]) if row else None


def unwritten_pages(conn: sqlite3.Connection, limit: int = 1000) -> list[SessionKey]:
    """Sessions that ended but whose page was never written (a crash came in between)."""
    return [SessionKey(*row) for row in conn.execute(UNWRITTEN_PAGES, (limit,))]


def page_unwritten(conn: sqlite3.Connection, key: SessionKey) -> bool:
    """The session ended but its page was never written (a crash came in between)."""
    ids = (key.workspace, key.project, key.session_id)
    return conn.execute(PAGE_UNWRITTEN, ids).fetchone() is not None


def session_page_id(conn: sqlite3.Connection, key: SessionKey) -> int | None:
    row = conn.execute(SESSION_PAGE, (key.workspace, key.project, key.session_id)).fetchone()
    return int(row[0]) if row is not None and row[0] is not None else None


def session_owner(conn: sqlite3.Connection, ids: tuple[str, str, str]) -> int | None:
    """The user whose key captured the session (None: the operator)."""
    row = conn.execute(SESSION_OWNER, ids).fetchone()
    return int(row["owner"]) if row is not None and row["owner"] is not None else None
