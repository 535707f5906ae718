"""Hook ingest: validate the query parameters, sanitize the payload, store it in one command.

The stored observation, its full-text row and its session row commit together;
an ``ingest_key`` the project already holds is acknowledged without a second row.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import Scope
from ai_memory.core.text import fts_text
from ai_memory.hookclient.resolve import resolve_project
from ai_memory.hooks.aliases import normalise, pick
from ai_memory.hooks.sanitize import SanitizedObservation, Sanitizer
from ai_memory.store import pages

PARAMS = ("event", "agent", "cwd", "workspace", "project", "session_id", "ingest_key")
_INGEST_KEY = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SESSION_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$")
_AGENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")
_SESSION_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")

INSERT_OBSERVATION = """
INSERT OR IGNORE INTO observations
    (workspace, project, session_id, agent, kind, ingest_key, tool_name, body, meta, created_at)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
INSERT_OBSERVATION_FTS = "INSERT INTO observations_fts(rowid, body) VALUES (?, ?)"
UPSERT_SESSION = """
INSERT INTO sessions (workspace, project, session_id, agent, cwd, started_at, last_event_at,
    ended_at, end_reason)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (workspace, project, session_id) DO UPDATE SET
    last_event_at = excluded.last_event_at,
    cwd = coalesce(sessions.cwd, excluded.cwd),
    ended_at = excluded.ended_at,
    end_reason = excluded.end_reason
"""


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One validated hook event, ready to be stored."""

    scope: Scope
    ingest_key: str | None
    cwd: str | None
    observation: SanitizedObservation


@dataclass(frozen=True, slots=True)
class IngestOutcome:
    stored: bool  # False: the ingest_key was already stored (acknowledged again)
    ended: bool  # the event ended its session: follow-up work is due


def parse_event(
    params: Mapping[str, str], body: object, sanitizer: Sanitizer, today: str | None = None
) -> HookEvent:
    """Validate parameters and payload; raise :class:`InvalidInput` saying what is wrong."""
    if not isinstance(body, dict):
        raise InvalidInput("the hook body must be a JSON object")
    agent = _param(params, "agent") or "generic"
    if not _AGENT.match(agent):
        raise InvalidInput(f"agent {agent[:80]!r} is not a valid agent name")
    key = _param(params, "ingest_key")
    if key is not None and not _INGEST_KEY.match(key):
        raise InvalidInput("ingest_key must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
    cwd = _param(params, "cwd") or _str(pick(body, "cwd"))
    if cwd is not None and len(cwd) > 4096:
        raise InvalidInput("cwd is longer than 4096 characters")
    if cwd is not None:
        cwd = sanitizer.clean(cwd, 4096) or None
    scope = scope_from(params, cwd)
    session_id = _session_id(params, body, agent, today)
    event = _param(params, "event")
    if event is not None and len(event) > 200:
        raise InvalidInput("event is longer than 200 characters")
    normalised = normalise(agent, event, body)
    extra = {"cwd": cwd} if cwd else None
    observation = sanitizer.observation(normalised, session_id, extra)
    return HookEvent(scope, key, cwd, observation)


def store_command(
    event: HookEvent, clock: Callable[[], str] = now_iso
) -> Callable[[sqlite3.Connection], IngestOutcome]:
    """The writer command storing one event: observation, FTS row and session row together."""
    obs = event.observation
    scope = event.scope

    def command(conn: sqlite3.Connection) -> IngestOutcome:
        now = clock()
        pages.ensure_project(conn, scope, now)
        cursor = conn.execute(
            INSERT_OBSERVATION,
            (
                scope.workspace,
                scope.project,
                obs.session_id,
                obs.agent,
                obs.kind,
                event.ingest_key,
                obs.tool_name,
                obs.body,
                obs.meta,
                now,
            ),
        )
        if cursor.rowcount == 0:
            return IngestOutcome(stored=False, ended=False)
        indexed = f"{obs.tool_name} {obs.body}" if obs.tool_name else obs.body
        conn.execute(INSERT_OBSERVATION_FTS, (cursor.lastrowid, fts_text(indexed)))
        ended = obs.kind == "session-end"
        reason = _reason(obs.meta) if ended else None
        conn.execute(
            UPSERT_SESSION,
            (
                scope.workspace,
                scope.project,
                obs.session_id,
                obs.agent,
                event.cwd,
                now,
                now,
                now if ended else None,
                (reason or "session-end") if ended else None,
            ),
        )
        return IngestOutcome(stored=True, ended=ended)

    return command


def _param(params: Mapping[str, str], name: str) -> str | None:
    value = params.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInput(f"{name} must be a string")
    value = value.strip()
    if "\x00" in value:
        raise InvalidInput(f"{name} contains NUL characters")
    return value or None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def scope_from(params: Mapping[str, str], cwd: str | None) -> Scope:
    workspace = _param(params, "workspace")
    project = _param(params, "project")
    if project is None:
        if cwd is None:
            raise InvalidInput("give project (or cwd, to resolve it from the checkout)")
        if not cwd.startswith("/"):
            raise InvalidInput("give project (or an absolute cwd to resolve it from)")
        try:
            identity = resolve_project(cwd)
        except (OSError, ValueError) as exc:
            raise InvalidInput(f"cannot resolve a project from cwd: {exc}") from None
        return Scope.of(workspace or identity.workspace, identity.project)
    return Scope.of(workspace, project)


def _session_id(
    params: Mapping[str, str], body: Mapping[str, object], agent: str, today: str | None
) -> str:
    given = _param(params, "session_id")
    if given is not None:
        if not _SESSION_ID.match(given):
            raise InvalidInput(
                "session_id must be 1-100 characters of letters, digits, '_', '-' or '.'"
            )
        return given
    found = pick(body, "session_id")
    if isinstance(found, str | int) and str(found).strip():
        cleaned = _SESSION_UNSAFE.sub("-", str(found)).strip("-.")[:100]
        if cleaned and _SESSION_ID.match(cleaned):
            return cleaned
    day = (today or now_iso())[:10].replace("-", "")
    return f"{agent}-{day}"


def _reason(meta: str) -> str | None:
    try:
        value = json.loads(meta).get("reason")
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) else None
