"""The session rows a command's stored events leave: opened, touched, ended, or told of
events that came late.

An event retried from a sender's spool is ``late``: dated when it was captured (or,
for a wait past belief, not dated at all), so a command's events may come in any
order of time, and after the session's end. The row's start moves back to the
earliest of them. Its last event (what the idle sweep and the lists of recent
sessions go by) counts a late event when it arrives: a session whose backlog is
still coming in is not silent.

A late end ends the session only if nothing the session holds came after it; else
(the session was resumed meanwhile) it ends nothing and counts as any late event.
A late event is dated by the wait its sender measured just before posting it, so the
post itself (encoding, sending, reading up to a megabyte) dates it a little later than
it happened: late work up to :data:`LATE_SLACK_S` after an end counts as before it,
unless the session started again after that end (a resume).
An ended session told of late events, its late end among them or not, stays ended and
has only its page written again, unless it worked on after that end: its handoff
stands (a new one would be dated now and displace newer sessions' handoffs).
A late real end in place of an idle end gives the session its real end time and
reason. A session that worked on after its end (offline) is reopened, or ended again
by its late end, as by any end.

A live end of an ended session that did no work after its end (none stored, and none
among the command's events: late ones all from before that end) ends it again, with the
live end's time and reason, as the last end always has; but it keeps its handoff and has
only its page written again: the agent closed a session the idle sweep had ended, or
told of its end twice. One that worked on after its end gets a handoff of that work.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ai_memory.core.clock import later_by

if TYPE_CHECKING:
    from ai_memory.hooks.ingest import HookEvent

Key = tuple[str, str, str]  # workspace, project, session id
IDLE_END = "idle"  # the end reason of a session the idle sweep ended
LATE_SLACK_S = 1.0  # how much later than it happened a late event may be dated

# Ending or reopening a session assigns started_at too (its index is rewritten then):
# these are a few rows a session, where TOUCH_SESSION runs for every event.
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
SELECT id, ended_at, end_reason FROM sessions
WHERE workspace = ? AND project = ? AND session_id = ? AND ended_at IS NOT NULL
"""
# Late word of an ended session: it stays ended (the caller has its page written again);
# an idle end gives way to the real end that came late, when that end has a time.
LATE_TO_ENDED = """
UPDATE sessions SET started_at = min(started_at, :started),
    last_event_at = max(last_event_at, :latest),
    ended_at = coalesce(:end_at, ended_at), end_reason = coalesce(:reason, end_reason)
WHERE id = :id
"""
NEWEST_EVENT = """
SELECT max(created_at) FROM observations WHERE workspace = ? AND project = ? AND session_id = ?
"""


@dataclass(slots=True)
class _End:
    """A session-end among a command's events, with its time and the place of its answer."""

    event: HookEvent
    at: str
    answer: int


@dataclass(slots=True)
class _Heard:
    """What a command's events say of one session."""

    event: HookEvent  # the last of them
    started: str  # the earliest time among them
    last_heard: str  # when the server last heard of the session: a late event's arrival
    late_latest: str  # the latest time of its late events (one without a time: "")
    work_latest: str  # the same of those that are not ends
    late_only: bool  # every one came late
    live_work: bool  # one of them is live (not late) and not an end
    late_start: str = ""  # the latest time of its late starts: a resume, however soon
    answers: list[int] = field(default_factory=list)
    ends: list[_End] = field(default_factory=list)


@dataclass(slots=True)
class ChangedAnswers:
    """What :meth:`SessionRows.write` changes in the command's answers."""

    rewrites: list[int] = field(default_factory=list)  # an ended session's page is due again
    superseded: list[int] = field(default_factory=list)  # ends that end nothing


class SessionRows:
    """Collects the sessions of a command's stored events, then writes their rows."""

    def __init__(self, now: str) -> None:
        self.now = now
        self._heard: dict[Key, _Heard] = {}

    def add(self, key: Key, event: HookEvent, at: str, answer: int) -> None:
        """``event`` (dated ``at``) was stored; its answer is ``answer`` in the list."""
        last_heard = self.now if event.late else at
        late_at = ("" if event.occurred_at is None else at) if event.late else ""
        ends = event.observation.kind == "session-end"
        work_at = "" if ends else late_at
        live_work = not (event.late or ends)
        seen = self._heard.get(key)
        if seen is None:
            seen = _Heard(event, at, last_heard, late_at, work_at, event.late, live_work)
            self._heard[key] = seen
        else:
            seen.event = event
            seen.started = min(seen.started, at)
            seen.last_heard = max(seen.last_heard, last_heard)
            seen.late_latest = max(seen.late_latest, late_at)
            seen.work_latest = max(seen.work_latest, work_at)
            seen.late_only = seen.late_only and event.late
            seen.live_work = seen.live_work or live_work
        if late_at and event.observation.kind == "session-start":
            seen.late_start = max(seen.late_start, late_at)
        seen.answers.append(answer)
        if ends:
            seen.ends.append(_End(event, at, answer))

    def write(
        self, conn: sqlite3.Connection, open_rows: dict[Key, int], owner: int | None
    ) -> ChangedAnswers:
        """Write every session's row; return the answers that change."""
        touched: list[tuple[object, ...]] = []
        earlier: list[tuple[object, ...]] = []
        late: list[dict[str, object]] = []
        rows: list[tuple[object, ...]] = []
        changed = ChangedAnswers()
        for key, seen in self._heard.items():
            end = _effective_end(conn, key, seen.ends)
            superseded = [e.answer for e in seen.ends if e is not end]
            changed.superseded += superseded
            row_id = open_rows.get(key)
            if row_id is not None and end is None:
                touched.append((seen.last_heard, seen.event.cwd, row_id))
                if seen.started < self.now:
                    earlier.append((seen.started, row_id, seen.started))
                continue
            ended = None
            if row_id is None and not seen.live_work:
                ended = conn.execute(ENDED_AT, key).fetchone()
            if ended is not None and _keeps_end(seen, end, ended[1]):
                late.append(_late_word(ended, seen, end))
                changed.rewrites += [a for a in seen.answers if a not in superseded]
                continue
            rows.append((*_session_row(seen, end), owner))
        for statement, values in ((TOUCH_SESSION, touched), (EARLIER_START, earlier)):
            if values:
                conn.executemany(statement, values)
        if late:
            conn.executemany(LATE_TO_ENDED, late)
        if rows:
            conn.executemany(UPSERT_SESSION, rows)
        return changed


def _effective_end(conn: sqlite3.Connection, key: Key, ends: list[_End]) -> _End | None:
    """The end among ``ends`` that ends the session: the latest, unless it came late and
    the session holds something after it (it went on meanwhile); None for no end."""
    if not ends:
        return None
    end = ends[0]
    for later in ends[1:]:
        if later.at >= end.at:  # the last of equal times, as the last event ended it before
            end = later
    if not end.event.late or end.event.occurred_at is None:
        return end  # live, or a wait past belief: it ends the session as it arrives
    newest = conn.execute(NEWEST_EVENT, key).fetchone()[0]
    return None if newest is not None and newest > end.at else end


def _keeps_end(seen: _Heard, end: _End | None, ended_at: str) -> bool:
    """Whether an ended session's row keeps its end for this late word of it: it does
    unless the session went on after that end (work dated over :data:`LATE_SLACK_S`
    after it, or, with no late end among the events, any of them). Then it is reopened,
    or ended again."""
    if seen.late_start > ended_at:
        return False  # started again after that end: no slack makes that earlier
    latest = seen.late_latest if end is None else seen.work_latest
    return latest <= later_by(ended_at, LATE_SLACK_S)


def _late_word(ended: sqlite3.Row, seen: _Heard, end: _End | None) -> dict[str, object]:
    """LATE_TO_ENDED's parameters for the row ``ended`` (id, end, reason)."""
    word: dict[str, object] = {"id": ended[0], "started": seen.started, "end_at": None}
    word["latest"] = seen.late_latest if seen.late_only else seen.last_heard
    word["reason"] = None
    if end is not None and _replaces(end, ended[2]):
        word["end_at"] = end.at
        word["reason"] = _reason(end.event.observation.meta) or "session-end"
    return word


def _replaces(end: _End, reason: str) -> bool:
    """Whether ``end`` takes the place of an ended session's end (of ``reason``): a live end
    does, as the last end always has; a late one only in place of an idle end, and only
    with a time of its own."""
    if not end.event.late:
        return True
    return end.event.occurred_at is not None and reason == IDLE_END


def _session_row(seen: _Heard, end: _End | None) -> tuple[object, ...]:
    """The session as its events in the command leave it: ended by ``end``, at its time."""
    event = seen.event
    obs = event.observation
    reason = (_reason(end.event.observation.meta) or "session-end") if end else None
    return (
        event.scope.workspace,
        event.scope.project,
        obs.session_id,
        obs.agent,
        event.cwd,
        seen.started,
        seen.last_heard,
        end.at if end else None,
        reason,
    )


def _reason(meta: str) -> str | None:
    try:
        value = json.loads(meta).get("reason")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
