"""What a consolidation reads before it asks: the session, the project's pages, its advice.

One reader connection, no writes. The pages found here are what the plan may
update; the versions seen are the preconditions of the writes, so a page changed
(or pinned) in between makes the batch fail as a whole and the job try again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ai_memory.consolidate.consolidation_prompt import Material
from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.kinds import pinned_by_path
from ai_memory.hooks.session_page import read_digest
from ai_memory.hooks.session_render import render_page
from ai_memory.store import llm_jobs, pages

LATEST_ENDED = """
SELECT session_id FROM sessions
WHERE workspace = ? AND project = ? AND ended_at IS NOT NULL AND page_id IS NOT NULL
    AND (? OR owner IS ?)
ORDER BY ended_at DESC, session_id DESC LIMIT 1
"""
DURABLE = """
SELECT id, path, title, body, pinned FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
    AND (path LIKE 'concepts/%' OR path LIKE 'decisions/%' OR path LIKE 'gotchas/%'
        OR path LIKE 'procedures/%')
ORDER BY path LIMIT ?
"""
# The same pages by path: those an answer names that the capped listing left out.
NAMED = """
SELECT id, path, title, body, pinned FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
    AND path IN ({marks})
"""
ADVISORY_PATH = "_prompts/consolidation.md"
MAX_LISTED = 300


@dataclass(frozen=True, slots=True)
class Existing:
    page_id: int
    title: str
    body: str
    pinned: bool


@dataclass
class SessionState:
    """The session as the plan saw it, and every durable page of its project."""

    scope: Scope
    session_id: str
    observation_count: int
    session_page_id: int
    session_body: str
    session_title: str
    durable: dict[str, Existing] = field(default_factory=dict)


def latest_ended_session(
    conn: sqlite3.Connection, scope: Scope, owner: tuple[bool, int | None] = (True, None)
) -> str:
    """The newest completed session; ``owner`` is (every owner's?, whose) — a user's
    request picks among their own sessions only."""
    args = (scope.workspace, scope.project, *owner)
    row = conn.execute(LATEST_ENDED, args).fetchone()
    if row is None:
        mine = "" if owner[0] else " of yours"
        raise NotFound(f"project {scope.project} has no completed session{mine} to consolidate")
    return str(row[0])


def read_session(
    conn: sqlite3.Connection, scope: Scope, session_id: str, advisory_chars: int
) -> tuple[SessionState, Material]:
    """The session (ended, with its page) and the project's pages, ready for a prompt."""
    digest = read_digest(conn, scope, session_id, recent_limit=50)
    if digest is None:
        raise NotFound(f"no session {session_id} in project {scope.project}")
    if digest.ended_at is None:
        raise InvalidInput(f"session {session_id} has not ended yet; consolidate it once it has")
    page = pages.latest(conn, scope.page(f"sessions/{session_id}.md"))
    if page is None or page["deleted_at"] is not None:
        raise InvalidInput(f"session {session_id} has no session page to consolidate")
    text, _meta = render_page(digest, digest.ended_at)
    durable = _existing(conn.execute(DURABLE, (scope.workspace, scope.project, MAX_LISTED)))
    state = SessionState(
        scope=scope,
        session_id=session_id,
        observation_count=llm_jobs.observation_count(
            conn, scope.workspace, scope.project, session_id
        ),
        session_page_id=int(page["id"]),
        session_body=page["body"],
        session_title=page["title"],
        durable=durable,
    )
    material = Material(
        project=scope.project,
        session_id=session_id,
        session_text=text,
        pages=[],
        listing=[
            (path, e.title + (" (pinned)" if e.pinned else "")) for path, e in durable.items()
        ],
        advisory=_advisory(conn, scope, advisory_chars),
    )
    return state, material


def read_named(conn: sqlite3.Connection, scope: Scope, paths: list[str]) -> dict[str, Existing]:
    """The durable pages at ``paths`` that exist (the listing stops at MAX_LISTED)."""
    if not paths:
        return {}
    sql = NAMED.format(marks=",".join("?" * len(paths)))
    return _existing(conn.execute(sql, (scope.workspace, scope.project, *paths)))


def _existing(rows: Iterable[sqlite3.Row]) -> dict[str, Existing]:
    return {
        row["path"]: Existing(
            int(row["id"]),
            row["title"],
            row["body"],
            bool(row["pinned"]) or pinned_by_path(row["path"]),
        )
        for row in rows
    }


def related_paths(hits: list[Any], limit: int) -> list[str]:
    """The durable pages among search hits, best first."""
    found: list[str] = []
    for hit in hits:
        path = str(hit.path)
        durable = path.split("/", 1)[0] in ("concepts", "decisions", "gotchas", "procedures")
        if durable and path not in found:
            found.append(path)
    return found[:limit]


def _advisory(conn: sqlite3.Connection, scope: Scope, limit: int) -> str:
    if limit <= 0:
        return ""
    row = pages.latest(conn, scope.page(ADVISORY_PATH))
    if row is None or row["deleted_at"] is not None:
        return ""
    body = str(row["body"])
    return body[:limit]
