"""Hook ingest: validate the query parameters and sanitize the payload into a
:class:`HookEvent`; :mod:`ai_memory.hooks.ingest_store` stores events in one command.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from ai_memory.core.clock import iso, now_iso, parse_iso
from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import Scope
from ai_memory.hookclient.resolve import resolve_project
from ai_memory.hooks.aliases import normalise, pick, picked
from ai_memory.hooks.ingest_store import (  # re-exported: where callers have always found them
    INSERT_OBSERVATION,
    INSERT_OBSERVATION_FTS,
    WORK_KINDS,
    IngestOutcome,
    store_command,
)
from ai_memory.hooks.sanitize import NeedsRedaction, SanitizedObservation, Sanitizer

__all__ = [
    "INSERT_OBSERVATION",
    "INSERT_OBSERVATION_FTS",
    "WORK_KINDS",
    "HookEvent",
    "IngestOutcome",
    "parse_event",
    "store_command",
]

# A body up to this size whose every field holds nothing a secret pattern matches is
# parsed where it arrives: its cost is bounded (one linear RE2 scan per field, ~0.2 ms),
# and it saves two thread hops. Larger bodies, and any field with a match, go to a worker.
IN_PLACE_BYTES = 16 * 1024
BUDGET = re.compile(r"[0-9]{1,5}")
INGEST_KEY = re.compile(r"[A-Za-z0-9_-]{1,64}")
SESSION_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")
AGENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")
# A normalised remote: ``github.com/acme/api`` (host, optional port, path).
REMOTE = re.compile(
    r"[A-Za-z0-9][A-Za-z0-9.-]{0,252}(?::[0-9]{1,5})?(?:/[A-Za-z0-9._~@+-]{1,200}){1,8}"
)
OCCURRED_MIN = "2000-01-01T00:00:00.000000Z"
# A retried event's wait in its sender's spool: seconds, with at most a fraction's digits.
QUEUED = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,9})?")
# A longer wait is not believed (a clock that was wrong at capture, such as a machine
# booted without one in 1970): such an event is dated when it arrives.
QUEUED_MAX_S = 30 * 86400
MAX_CWD = 4096


@dataclass(slots=True)
class Checked:
    """:func:`common_params`' answer for one agent, checkout and project, and the session
    ids checked under them: the items of a batch mostly share all of these."""

    agent: str
    cwd: str | None
    scope: Scope
    sessions: dict[str, str] = field(default_factory=dict)  # given session_id -> checked


# Keyed by what common_params reads: the agent, cwd, workspace and project parameters
# and the body's own cwd.
ParamsMemo = dict[tuple[object, ...], Checked]


@dataclass(frozen=True, slots=True)
class HookEvent:
    """One validated hook event, ready to be stored."""

    scope: Scope
    ingest_key: str | None
    cwd: str | None
    observation: SanitizedObservation
    remote: str | None = None
    occurred_at: str | None = None  # when it happened, if not now (an imported transcript)
    late: bool = False  # retried from a sender's spool: dated when captured (if believable)
    asked: Scope | None = None  # the old project name it came under, when an alias led it here


def parse_event(
    params: Mapping[str, str],
    body: object,
    sanitizer: Sanitizer,
    today: str | None = None,
    memo: ParamsMemo | None = None,
    received: str | None = None,
) -> HookEvent:
    """Validate parameters and payload; raise :class:`InvalidInput` saying what is wrong.

    ``memo`` keeps :func:`common_params` answers across the items of one batch, which
    mostly share their agent, checkout and project. ``received``: when the request that
    holds the event arrived (default: now), what its wait (``queued_s``) counts back
    from: not the end of decoding a big batch, which would date its events late."""
    if not isinstance(body, dict):
        raise InvalidInput("the hook body must be a JSON object")
    found = picked(body)
    checked = _common(params, _str(found.get("cwd")), sanitizer, memo)
    agent, cwd = checked.agent, checked.cwd
    key = _param(params, "ingest_key")
    if key is not None and not INGEST_KEY.fullmatch(key):
        raise InvalidInput("ingest_key must be 1-64 characters of A-Z, a-z, 0-9, '_' or '-'")
    session_id = _session_id(params, found, checked, sanitizer, today)
    event = _param(params, "event")
    if event is not None and len(event) > 200:
        raise InvalidInput("event is longer than 200 characters")
    normalised = normalise(agent, event, body, found)
    extra = {"cwd": cwd} if cwd else None
    observation = sanitizer.observation(normalised, session_id, extra)
    occurred = occurred_at(_param(params, "occurred_at"))
    waited = _param(params, "queued_s")
    # Checked even beside occurred_at.
    queued = queued_since(waited, now_iso if received is None else lambda: received)
    late = occurred is None and waited is not None  # undated when the wait is past belief
    return HookEvent(
        checked.scope,
        key,
        cwd,
        observation,
        _remote(params, sanitizer),
        occurred or queued,
        late=late,
    )


def parse_in_place(
    params: Mapping[str, str], body: object, sanitizer: Sanitizer, size: int
) -> HookEvent | None:
    """:func:`parse_event` on the calling thread when that is cheap; None when it is not
    (``size``, the body's bytes, over :data:`IN_PLACE_BYTES`; no ``project`` given, so
    resolving one from ``cwd`` would read the checkout's files; or a field with text to
    redact). Invalid input raises :class:`InvalidInput` here just the same."""
    if size > IN_PLACE_BYTES or not params.get("project"):
        return None
    try:
        return parse_event(params, body, sanitizer.in_place())
    except NeedsRedaction:
        return None


def common_params(
    params: Mapping[str, str], body: Mapping[str, object], sanitizer: Sanitizer
) -> tuple[str, str | None, Scope]:
    """The agent, the (sanitized) cwd and the scope: checked alike for /hook and /handoff."""
    checked = _checked(params, _str(pick(body, "cwd")), sanitizer)
    return checked.agent, checked.cwd, checked.scope


def _checked(params: Mapping[str, str], body_cwd: str | None, sanitizer: Sanitizer) -> Checked:
    agent = _param(params, "agent") or "generic"
    if not AGENT.fullmatch(agent):
        raise InvalidInput(f"agent {agent[:80]!r} is not a valid agent name")
    if sanitizer.holds_secret(agent):
        agent = "redacted"
    cwd = _param(params, "cwd") or body_cwd
    if cwd is not None and len(cwd) > MAX_CWD:
        raise InvalidInput(f"cwd is longer than {MAX_CWD} characters")
    if cwd is not None:
        cwd = sanitizer.clean(cwd, MAX_CWD) or None
    return Checked(agent, cwd, scope_from(params, cwd))


def _common(
    params: Mapping[str, str],
    body_cwd: str | None,
    sanitizer: Sanitizer,
    memo: ParamsMemo | None,
) -> Checked:
    if memo is None:
        return _checked(params, body_cwd, sanitizer)
    get = params.get
    key = (get("agent"), get("cwd"), get("workspace"), get("project"), body_cwd)
    try:
        found = memo.get(key)
    except TypeError:  # a parameter that is not text: checked (and refused) the long way
        return _checked(params, body_cwd, sanitizer)
    if found is None:
        found = memo[key] = _checked(params, body_cwd, sanitizer)
    return found


def cwd_problem(cwd: str) -> str | None:
    """Why a ``cwd`` parameter would be refused (None: it is taken), for an import to
    leave the session out before it counts or sends it."""
    if "\x00" in cwd:
        return "cwd contains NUL characters"
    if len(cwd.strip()) > MAX_CWD:
        return f"cwd is longer than {MAX_CWD} characters"
    return None


def given_session_id(params: Mapping[str, str], sanitizer: Sanitizer) -> str | None:
    """The ``session_id`` parameter, checked; None when absent.

    One holding a secret is replaced by an id derived from it (it would become a file name).
    """
    given = _param(params, "session_id")
    if given is None:
        return None
    if not SESSION_ID.fullmatch(given):
        raise InvalidInput(
            "session_id must be 1-100 characters of letters, digits, '_', '-' or '.'"
        )
    return sanitizer.session_id(given)


def _remote(params: Mapping[str, str], sanitizer: Sanitizer) -> str | None:
    """The checkout's normalised remote; one that is malformed or holds a secret is dropped."""
    remote = _param(params, "remote")
    if remote is None or len(remote) > 600 or not REMOTE.fullmatch(remote):
        return None
    return None if sanitizer.holds_secret(remote) else remote


def occurred_at(value: str | None, clock: Callable[[], str] = now_iso) -> str | None:
    """An event's own time (ISO 8601), in the store's format; bounded to [2000, now + 5 min]
    so a wrong clock in a transcript can neither date work in the future nor before 2000."""
    if value is None:
        return None
    stamp = parse_iso(value)
    if stamp is None:
        raise InvalidInput("occurred_at must be an ISO 8601 date and time")
    latest = iso(datetime.fromisoformat(clock()) + timedelta(minutes=5))
    if not OCCURRED_MIN <= stamp <= latest:
        raise InvalidInput(f"occurred_at {value[:40]!r} is before 2000 or in the future")
    return stamp


def queued_since(value: str | None, clock: Callable[[], str] = now_iso) -> str | None:
    """When a retried event was captured: ``value`` seconds (``queued_s``, how long it
    waited in its sender's spool, timed by the sender's own clock) before now; None
    for a wait past :data:`QUEUED_MAX_S`, which is not believed."""
    if value is None:
        return None
    if not QUEUED.fullmatch(value):
        raise InvalidInput("queued_s must be a number of seconds, such as 12.5")
    waited = float(value)
    if waited > QUEUED_MAX_S:
        return None
    return iso(datetime.fromisoformat(clock()) - timedelta(seconds=waited))


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
    params: Mapping[str, str],
    found_fields: Mapping[str, object],
    checked: Checked,
    sanitizer: Sanitizer,
    today: str | None,
) -> str:
    raw = params.get("session_id")
    known = checked.sessions.get(raw) if isinstance(raw, str) else None
    if known is not None:
        return known
    given = given_session_id(params, sanitizer)
    if given is not None:
        if isinstance(raw, str):
            checked.sessions[raw] = given
        return given
    found = found_fields.get("session_id")
    # A number is an id (as its digits), a flag is not one.
    if isinstance(found, str | int) and not isinstance(found, bool) and str(found).strip():
        cleaned = sanitizer.session_id(str(found))
        if cleaned and SESSION_ID.fullmatch(cleaned):
            return cleaned
    day = (today or now_iso())[:10].replace("-", "")
    return f"{checked.agent}-{day}"


def budget_param(value: str | None, default: int) -> int:
    """A packet's ``budget`` parameter in characters; ``default`` when absent."""
    if value is None or value == "":
        return default
    if not BUDGET.fullmatch(value):
        raise InvalidInput("budget must be a whole number of characters (at most 5 digits)")
    return int(value)
