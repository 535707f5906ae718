"""The writer command that stores hook events: observations, FTS rows and sessions.

The stored observation, its full-text row and its session row commit together;
an ``ingest_key`` the project already holds is acknowledged without a second row.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ai_memory.core.clock import now_iso
from ai_memory.core.principal import Principal
from ai_memory.core.text import fts_text
from ai_memory.hooks.ingest_access import refusals
from ai_memory.hooks.session_rows import SessionRows
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
PROJECT_REMOTE = "SELECT remote FROM projects WHERE workspace = ? AND name = ?"


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    stored: bool  # False: the ingest_key was already stored (acknowledged again)
    ended: bool  # the event ended its session: follow-up work is due
    refused: str | None = None  # why the caller may not store it (a 403); nothing stored
    rewrite: bool = False  # late to an ended session: its page is due again (no handoff)


STORED = IngestOutcome(stored=True, ended=False)
ENDED = IngestOutcome(stored=True, ended=True)
DUPLICATE = IngestOutcome(stored=False, ended=False)
LATE_PAGE = IngestOutcome(stored=True, ended=False, rewrite=True)


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
        sessions = SessionRows(now)
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
            sessions.add(key, event, at, len(outcomes))
            outcomes.append(ENDED if obs.kind == "session-end" else STORED)
        if fts_rows:
            conn.executemany(INSERT_OBSERVATION_FTS, fts_rows)
        changed = sessions.write(conn, open_rows, owner)
        for index in changed.rewrites:
            outcomes[index] = LATE_PAGE
        for index in changed.superseded:
            outcomes[index] = STORED  # a late end the session went on after: it ends nothing
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
