"""The writer command that stores hook events: observations, FTS rows and sessions.

The stored observation, its full-text row and its session row commit together;
an ``ingest_key`` the project already holds is acknowledged without a second row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ai_memory.core.clock import now_iso
from ai_memory.core.principal import Principal
from ai_memory.core.text import fts_text
from ai_memory.hooks.ingest_access import refusals
from ai_memory.store import pages
from ai_memory.store.acting import acting

if TYPE_CHECKING:
    from ai_memory.hooks.ingest import HookEvent

# Events that are work; a project is created by these only. Lifecycle events alone (an
# agent's health check firing SessionStart/SessionEnd in some folder) leave nothing behind.
WORK_KINDS = frozenset(
    {"user-prompt", "pre-tool-use", "post-tool-use", "stop", "subagent-stop", "post-compaction"}
)
INSERT_OBSERVATION = """
INSERT OR IGNORE INTO observations
    (workspace, project, session_id, agent, kind, ingest_key, tool_name, body, meta, created_at,
    owner)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
INSERT_OBSERVATION_FTS = "INSERT INTO observations_fts(rowid, body) VALUES (?, ?)"
UPSERT_SESSION = """
INSERT INTO sessions (workspace, project, session_id, agent, cwd, started_at, last_event_at,
    ended_at, end_reason, owner)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (workspace, project, session_id) DO UPDATE SET
    started_at = min(sessions.started_at, excluded.started_at),
    last_event_at = max(sessions.last_event_at, excluded.last_event_at),
    cwd = coalesce(sessions.cwd, excluded.cwd),
    ended_at = excluded.ended_at,
    end_reason = excluded.end_reason,
    page_id = CASE WHEN excluded.ended_at IS NULL THEN sessions.page_id END
"""
PROJECT_REMOTE = "SELECT remote FROM projects WHERE workspace = ? AND name = ?"
# What UPSERT_SESSION does to a row that is open (no end, no reason) for an event that
# does not end it, without assigning the end columns: an index over a column a statement
# assigns is rewritten even when its value stays the same (sessions_open, one WAL page).
# An event delivered late (a retry from a spool, dated when it was captured) moves
# neither time back.
TOUCH_SESSION = (
    "UPDATE sessions SET last_event_at = max(last_event_at, ?), cwd = coalesce(cwd, ?) WHERE id = ?"
)
# Only for an event that carries its own time, and a no-op unless it is earlier: a
# statement that assigns started_at rewrites its index (sessions_by_id) for every row.
EARLIER_START = "UPDATE sessions SET started_at = ? WHERE id = ? AND started_at > ?"


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    stored: bool  # False: the ingest_key was already stored (acknowledged again)
    ended: bool  # the event ended its session: follow-up work is due
    refused: str | None = None  # why the caller may not store it (a 403); nothing stored


STORED = IngestOutcome(stored=True, ended=False)
ENDED = IngestOutcome(stored=True, ended=True)
DUPLICATE = IngestOutcome(stored=False, ended=False)


def store_command(
    events: Sequence[HookEvent],
    clock: Callable[[], str] = now_iso,
    who: Principal | None = None,
) -> Callable[[sqlite3.Connection], list[IngestOutcome]]:
    """The writer command storing events: observations, FTS rows and session rows together.

    A batch is one command: its projects and sessions are touched once each. What is
    stored belongs to ``who`` (default: whoever submitted the command); an event ``who``
    may not store is answered ``refused`` and leaves nothing.
    """

    def command(conn: sqlite3.Connection) -> list[IngestOutcome]:
        now = clock()
        caller = who or acting()
        owner = caller.owner
        open_rows: dict[tuple[str, str, str], int] = {}
        refused = refusals(conn, events, caller, open_rows)
        known = _projects(conn, [e for i, e in enumerate(events) if i not in refused], now)
        outcomes: list[IngestOutcome] = []
        # Per session: its last event here, and the earliest and latest times of its events
        # here (a retried event is dated when it was captured, so they may come in any order).
        sessions: dict[tuple[str, str, str], tuple[HookEvent, str, str]] = {}
        fts_rows: list[tuple[int | None, str]] = []
        for index, event in enumerate(events):
            if index in refused:
                outcomes.append(IngestOutcome(stored=False, ended=False, refused=refused[index]))
                continue
            scope, obs = event.scope, event.observation
            if (scope.workspace, scope.project) not in known:  # lifecycle only, no project
                outcomes.append(STORED)
                continue
            at = event.occurred_at or now
            cursor = conn.execute(INSERT_OBSERVATION, (*_observation_row(event, at), owner))
            if cursor.rowcount == 0:
                outcomes.append(DUPLICATE)
                continue
            indexed = f"{obs.tool_name} {obs.body}" if obs.tool_name else obs.body
            fts_rows.append((cursor.lastrowid, fts_text(indexed)))
            key = (scope.workspace, scope.project, obs.session_id)
            seen = sessions.get(key)
            sessions[key] = (
                (event, at, at) if seen is None else (event, min(seen[1], at), max(seen[2], at))
            )
            outcomes.append(ENDED if obs.kind == "session-end" else STORED)
        if fts_rows:
            conn.executemany(INSERT_OBSERVATION_FTS, fts_rows)
        rows: list[tuple[object, ...]] = []
        touched: list[tuple[object, ...]] = []
        earlier: list[tuple[object, ...]] = []
        for key, (event, started, last) in sessions.items():
            row_id = open_rows.get(key)
            if row_id is not None and event.observation.kind != "session-end":
                touched.append((last, event.cwd, row_id))
                if started != now:
                    earlier.append((started, row_id, started))
            else:
                rows.append((*_session_row(event, started, last), owner))
        steps = ((TOUCH_SESSION, touched), (EARLIER_START, earlier), (UPSERT_SESSION, rows))
        for statement, values in steps:
            if values:
                conn.executemany(statement, values)
        return outcomes

    return command


def _projects(
    conn: sqlite3.Connection, events: Sequence[HookEvent], now: str
) -> set[tuple[str, str]]:
    """The (workspace, project) pairs whose events are stored: created by work, or existing
    already. Each project's remote is recorded the first time one is known.
    """
    by_scope: dict[tuple[str, str], list[HookEvent]] = {}
    for event in events:
        by_scope.setdefault((event.scope.workspace, event.scope.project), []).append(event)
    known: set[tuple[str, str]] = set()
    for key, mine in by_scope.items():
        scope = mine[0].scope
        # One read for the usual case, a project that exists with its remote recorded:
        # the inserts and the update below would change nothing.
        found = conn.execute(PROJECT_REMOTE, key).fetchone()
        if found is None:
            if not any(event.observation.kind in WORK_KINDS for event in mine):
                continue
            pages.ensure_project(conn, scope, now)
        known.add(key)
        remote = next((event.remote for event in mine if event.remote), None)
        if remote is not None and (found is None or found[0] is None):
            pages.set_project_remote(conn, scope, remote)
    return known


def _observation_row(event: HookEvent, at: str) -> tuple[object, ...]:
    obs = event.observation
    return (
        event.scope.workspace,
        event.scope.project,
        obs.session_id,
        obs.agent,
        obs.kind,
        event.ingest_key,
        obs.tool_name,
        obs.body,
        obs.meta,
        at,
    )


def _session_row(event: HookEvent, started: str, at: str) -> tuple[object, ...]:
    """The session as its last event in the command leaves it: ended only by a session-end.

    ``started`` and ``at`` are the earliest and latest times of its events in the command
    (the row's own times win where they are earlier and later)."""
    obs = event.observation
    ended = obs.kind == "session-end"
    reason = (_reason(obs.meta) or "session-end") if ended else None
    return (
        event.scope.workspace,
        event.scope.project,
        obs.session_id,
        obs.agent,
        event.cwd,
        started,
        at,
        at if ended else None,
        reason,
    )


def _reason(meta: str) -> str | None:
    try:
        value = json.loads(meta).get("reason")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
