"""A past session as the hook events live capture would have sent, and the import plan.

Each entry becomes one ``/hook/batch`` item: the same parameters a live hook sends
(agent, cwd, project resolved from the cwd like the hook client does, session id),
an ``ingest_key`` derived from the source (agent, session, entry) so that a second
import stores nothing twice, and the entry's own time as ``occurred_at``. A last
``session-end`` at the session's final time closes it, so its page is written.

The checkout's capture policy (``[capture]`` in ``.ai-memory.toml`` and the user's
``capture.toml``) applies as it does to a live hook: a checkout with ``mode = "off"``
(or a policy that cannot be read) is left out whole, excluded files drop their tool
events, and ``capture_assistant = false`` keeps the assistant's answers out.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.core.identity import Scope
from ai_memory.hookclient.policy import Policy, apply, load_policy
from ai_memory.hookclient.resolve import locate_checkout
from ai_memory.hookclient.shrink import shrink
from ai_memory.hooks.ingest import OCCURRED_MIN, cwd_problem
from ai_memory.importers.model import Entry, Transcript, Unreadable

KEY_PREFIX = "bf-"
END_REASON = "imported"


@dataclass(frozen=True, slots=True)
class Filters:
    agents: tuple[str, ...] = ()
    project: str | None = None  # a project name, or workspace/project
    cwd: str | None = None  # sessions run in this directory or below it
    since: str | None = None  # ISO date: sessions that ended on or after it
    limit: int | None = None  # the newest sessions only
    skip: tuple[str, ...] = ()  # session ids left out (one that is running)


@dataclass(frozen=True, slots=True)
class Planned:
    transcript: Transcript
    scope: Scope
    remote: str | None
    items: list[dict[str, Any]]


@dataclass
class Tally:
    """What an import found (and, once run, what it stored): the summary it prints."""

    sessions: int = 0
    events: int = 0
    skipped_lines: int = 0
    no_directory: int = 0
    not_captured: int = 0  # sessions in a checkout whose capture policy is off
    unreadable: list[Unreadable] = field(default_factory=list)
    projects: dict[str, dict[str, int]] = field(default_factory=dict)
    stored: int = 0
    accepted: int = 0  # through a server: taken (its answer does not tell new from known)
    duplicates: int = 0
    rejected: int = 0
    dropped: int = 0  # by the server's [ingest] lists
    errors: list[str] = field(default_factory=list)

    def note(self, error: str) -> None:
        """An error to print in the summary (the first 20 are kept)."""
        if len(self.errors) < 20:
            self.errors.append(error[:300])

    def count(self, plan: Planned) -> None:
        self.sessions += 1
        self.events += len(plan.items)
        self.skipped_lines += plan.transcript.skipped
        name = str(plan.scope)
        row = self.projects.setdefault(name, {"sessions": 0, "events": 0})
        row["sessions"] += 1
        row["events"] += len(plan.items)

    def to_dict(self) -> dict[str, Any]:
        return {
            "sessions": self.sessions,
            "events": self.events,
            "skipped_lines": self.skipped_lines,
            "no_directory": self.no_directory,
            "not_captured": self.not_captured,
            "unreadable": [{"agent": u.agent, "source": u.source, "reason": u.reason}
                           for u in self.unreadable],
            "projects": self.projects,
            "stored": self.stored,
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "rejected": self.rejected,
            "dropped": self.dropped,
            "errors": self.errors[:20],
        }  # fmt: skip


class Planner:
    """Resolves each session's project from its cwd (once per directory) and filters."""

    def __init__(self, filters: Filters, env: Mapping[str, str]) -> None:
        self.filters = filters
        self.env = env
        self._resolved: dict[str, Checkout | None] = {}

    def plan(self, found: Iterable[Transcript | Unreadable], tally: Tally) -> list[Planned]:
        """The sessions to import, oldest first; what was skipped is counted in ``tally``."""
        chosen: list[Planned] = []
        for transcript in found:
            if isinstance(transcript, Unreadable):
                tally.unreadable.append(transcript)
                continue
            planned = self._one(transcript, tally)
            if planned is not None:
                chosen.append(planned)
        chosen.sort(key=lambda p: p.transcript.started_at or "")
        if self.filters.limit is not None:
            chosen = chosen[-self.filters.limit :] if self.filters.limit else []
        for planned in chosen:
            tally.count(planned)
        return chosen

    def _one(self, transcript: Transcript, tally: Tally) -> Planned | None:
        if transcript.session_id in self.filters.skip:
            return None
        if not transcript.has_work or not self._recent(transcript):
            return None
        if transcript.cwd is None:
            tally.no_directory += 1
            return None
        problem = cwd_problem(transcript.cwd)
        if problem is not None:
            tally.no_directory += 1
            tally.note(f"{transcript.source}: {problem}")
            return None
        if self.filters.cwd is not None and not _within(transcript.cwd, self.filters.cwd):
            return None
        resolved = self._resolve(transcript.cwd)
        if resolved is None:
            tally.no_directory += 1
            return None
        wanted = self.filters.project
        if wanted is not None and wanted not in (resolved.scope.project, str(resolved.scope)):
            return None
        if resolved.policy.mode == "off":
            tally.not_captured += 1
            if resolved.policy.problem is not None:
                tally.note(
                    f"{transcript.source}: capture policy not applied: {resolved.policy.problem}"
                )
            return None
        return Planned(transcript, resolved.scope, resolved.remote, items(transcript, resolved))

    def _recent(self, transcript: Transcript) -> bool:
        since = self.filters.since
        return since is None or (transcript.ended_at or "") >= since

    def _resolve(self, cwd: str) -> Checkout | None:
        """The checkout's project and capture policy, found once per directory."""
        if cwd not in self._resolved:
            try:
                identity, marker = locate_checkout(cwd)
                scope = Scope.of(identity.workspace, identity.project)
                policy = load_policy(identity.root, marker, self.env)
                self._resolved[cwd] = Checkout(scope, identity.remote, policy)
            except (OSError, ValueError, AiMemoryError):
                self._resolved[cwd] = None
        return self._resolved[cwd]


@dataclass(frozen=True, slots=True)
class Checkout:
    scope: Scope
    remote: str | None
    policy: Policy


def items(transcript: Transcript, checkout: Checkout) -> list[dict[str, Any]]:
    """The ``/hook/batch`` items replaying ``transcript``, ending with its session-end;
    what the checkout's capture policy drops is not among them."""
    scope, remote = checkout.scope, checkout.remote
    # Named after the last entry: a transcript that grew since (a resumed session) ends again.
    last_entry = transcript.entries[-1].ident if transcript.entries else ""
    end = Entry("session-end", f"end@{last_entry}", transcript.ended_at, {"reason": END_REASON})
    params = {
        "agent": transcript.agent,
        "cwd": transcript.cwd or "",
        "workspace": scope.workspace,
        "project": scope.project,
        "session_id": transcript.session_id,
    }
    if remote:
        params["remote"] = remote
    made: list[dict[str, Any]] = []
    last = transcript.started_at
    now = now_iso()
    for entry in [*transcript.entries, end]:
        last = entry.at or last
        body = apply(checkout.policy, entry.kind, dict(entry.payload), transcript.cwd or "/")
        if body is None:
            continue
        body = shrink(body)  # cut like the live hook client cuts what it sends
        own = {**params, "event": entry.kind, "ingest_key": ingest_key(transcript, entry)}
        if last and last >= OCCURRED_MIN:  # a clock that ran ahead is taken as now
            own["occurred_at"] = min(last, now)
        made.append({"params": own, "body": body})
    return made


def ingest_key(transcript: Transcript, entry: Entry) -> str:
    """The same key for the same entry of the same session, however often it is imported."""
    source = f"{transcript.agent}\0{transcript.session_id}\0{entry.ident}".encode()
    return KEY_PREFIX + hashlib.sha256(source).hexdigest()[:40]


def _within(cwd: str, folder: str) -> bool:
    base = os.path.normpath(os.path.abspath(os.path.expanduser(folder)))
    path = os.path.normpath(cwd)
    return path == base or path.startswith(base.rstrip("/") + "/")
