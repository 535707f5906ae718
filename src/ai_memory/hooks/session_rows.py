"""The session rows a command's stored events leave: opened, touched, ended, or told of
events that came late.

An event retried from a sender's spool is ``late``: dated when it was captured (or,
for a wait past belief, not dated at all), so a command's events may come in any
order of time, and after the session's end. The row's start moves back to the
earliest of them. Its last event (what the idle sweep and the lists of recent
sessions go by) counts a late event when it arrives: a session whose backlog is
still coming in is not silent. An ended session told of late events from before its
end stays ended, and only its page is written again to hold them. A late end of a
session that holds newer events (it was resumed meanwhile) ends nothing.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ai_memory.hooks.ingest import HookEvent

Key = tuple[str, str, str]  # workspace, project, session id

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
# What UPSERT_SESSION does to a row that is open (no end, no reason) for an event that
# does not end it, without assigning the end columns: an index over a column a statement
# assigns is rewritten even when its value stays the same (sessions_open, one WAL page).
TOUCH_SESSION = (
    "UPDATE sessions SET last_event_at = max(last_event_at, ?), cwd = coalesce(cwd, ?) WHERE id = ?"
)
# Only for an event that carries its own time, and a no-op unless it is earlier: a
# statement that assigns started_at rewrites its index (sessions_by_id) for every row.
EARLIER_START = "UPDATE sessions SET started_at = ? WHERE id = ? AND started_at > ?"
ENDED_AT = """
SELECT id, ended_at FROM sessions
WHERE workspace = ? AND project = ? AND session_id = ? AND ended_at IS NOT NULL
"""
# Late events from before the end: the row keeps its end (the caller rewrites the page).
LATE_TO_ENDED = "UPDATE sessions SET started_at = min(started_at, ?) WHERE id = ?"
NEWEST_EVENT = """
SELECT max(created_at) FROM observations WHERE workspace = ? AND project = ? AND session_id = ?
"""


@dataclass(slots=True)
class _Heard:
    """What a command's events say of one session."""

    event: HookEvent  # the last of them
    started: str  # the earliest time among them
    heard: str  # when the server last heard of the session: a late event's arrival
    latest: str  # the latest time among them, a late one without a time counting as ""
    late_only: bool  # every one came late and none of them ends the session
    outcomes: list[int] = field(default_factory=list)  # their places in the answer


@dataclass(slots=True)
class Written:
    """The answers :meth:`SessionRows.write` changes: late events whose ended session's
    page is due again, and late ends that end nothing."""

    rewrites: list[int] = field(default_factory=list)
    superseded: list[int] = field(default_factory=list)


class SessionRows:
    """Collects the sessions of a command's stored events, then writes their rows."""

    def __init__(self, now: str) -> None:
        self.now = now
        self._heard: dict[Key, _Heard] = {}

    def add(self, key: Key, event: HookEvent, at: str, outcome: int) -> None:
        """``event`` (dated ``at``) was stored; its answer is ``outcome`` in the list."""
        heard = self.now if event.late else at
        latest = "" if event.late and event.occurred_at is None else at
        late = event.late and event.observation.kind != "session-end"
        seen = self._heard.get(key)
        if seen is None:
            seen = self._heard[key] = _Heard(event, at, heard, latest, late)
        else:
            seen.event = event
            seen.started = min(seen.started, at)
            seen.heard, seen.latest = max(seen.heard, heard), max(seen.latest, latest)
            seen.late_only = seen.late_only and late
        seen.outcomes.append(outcome)

    def write(
        self, conn: sqlite3.Connection, open_rows: dict[Key, int], owner: int | None
    ) -> Written:
        """Write every session's row; return the answers that change."""
        touched: list[tuple[object, ...]] = []
        earlier: list[tuple[object, ...]] = []
        late: list[tuple[object, ...]] = []
        rows: list[tuple[object, ...]] = []
        written = Written()
        for key, seen in self._heard.items():
            ends = seen.event.observation.kind == "session-end"
            if ends and seen.event.late and _has_newer(conn, key, seen.event):
                ends = False
                written.superseded.append(seen.outcomes[-1])
            row_id = open_rows.get(key)
            if row_id is not None and not ends:
                touched.append((seen.heard, seen.event.cwd, row_id))
                if seen.started != self.now:
                    earlier.append((seen.started, row_id, seen.started))
                continue
            ended = conn.execute(ENDED_AT, key).fetchone() if seen.late_only else None
            if ended is not None and seen.latest <= ended[1]:
                late.append((seen.started, ended[0]))
                written.rewrites += seen.outcomes
                continue
            rows.append((*_session_row(seen, self.now, ends), owner))
        steps = (
            (TOUCH_SESSION, touched),
            (EARLIER_START, earlier),
            (LATE_TO_ENDED, late),
            (UPSERT_SESSION, rows),
        )
        for statement, values in steps:
            if values:
                conn.executemany(statement, values)
        return written


def _has_newer(conn: sqlite3.Connection, key: Key, end: HookEvent) -> bool:
    """Whether the session holds events after the late ``end`` (it went on meanwhile)."""
    if end.occurred_at is None:
        return False  # a wait past belief: it ends the session when it arrives, as it did
    newest = conn.execute(NEWEST_EVENT, key).fetchone()[0]
    return newest is not None and newest > end.occurred_at


def _session_row(seen: _Heard, now: str, ends: bool) -> tuple[object, ...]:
    """The session as its last event in the command leaves it: ended by a session-end
    (``ends``), at that event's own time."""
    event = seen.event
    obs = event.observation
    reason = (_reason(obs.meta) or "session-end") if ends else None
    return (
        event.scope.workspace,
        event.scope.project,
        obs.session_id,
        obs.agent,
        event.cwd,
        seen.started,
        seen.heard,
        (event.occurred_at or now) if ends else None,
        reason,
    )


def _reason(meta: str) -> str | None:
    try:
        value = json.loads(meta).get("reason")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
