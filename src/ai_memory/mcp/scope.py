"""Which project a tool call answers from, and why.

The order is the same for every tool: explicit ``workspace``/``project``
arguments; the project of the calling agent's session (the bridge forwards the
session id); the project of the bridge's launch directory; the configured
default project. A ``workspace`` given without a ``project`` is never dropped:
the session counts only if it is in that workspace, and the launch directory's
or default project is taken in it. Reads never create a project; a write that only reached the
default is refused rather than landing somewhere the agent did not mean.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from ai_memory.core.errors import ScopeUnresolved
from ai_memory.core.identity import GLOBAL_PROJECT, Scope
from ai_memory.hookclient.resolve import resolve_project
from ai_memory.hooks.handoffs import same_place
from ai_memory.mcp.errors import argument
from ai_memory.runtime import Runtime
from ai_memory.store import pages, project_moves

SESSION_HEADER = "x-ai-memory-session"
CWD_HEADER = "x-ai-memory-cwd"
AGENT_HEADER = "x-ai-memory-agent"

OPEN_SESSIONS = """
SELECT session_id, cwd FROM sessions
WHERE workspace = ? AND project = ? AND ended_at IS NULL AND (? IS NULL OR agent = ?)
    AND owner IS ?
ORDER BY last_event_at DESC LIMIT 20
"""

# Served by the sessions_by_id index; an explicit workspace narrows it.
SESSION_PROJECT = """
SELECT workspace, project FROM sessions
WHERE session_id = ? AND (? IS NULL OR workspace = ?)
ORDER BY last_event_at DESC LIMIT 1
"""


@dataclass(frozen=True, slots=True)
class ResolvedScope:
    scope: Scope
    source: str  # "explicit", "global", "session", "launch_dir", "default"
    reason: str
    exists: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "workspace": self.scope.workspace,
            "project": self.scope.project,
            "source": self.source,
            "reason": self.reason,
            "exists": self.exists,
        }


@dataclass(frozen=True, slots=True)
class Caller:
    """What the transport tells us about the calling agent."""

    session_id: str | None = None
    cwd: str | None = None
    agent: str | None = None

    @classmethod
    def from_headers(cls, headers: Mapping[str, str] | None) -> Caller:
        if not headers:
            return cls()
        return cls(
            session_id=_clean(headers.get(SESSION_HEADER)),
            cwd=_clean(headers.get(CWD_HEADER)),
            agent=_clean(headers.get(AGENT_HEADER)),
        )


async def resolve_scope(
    runtime: Runtime,
    caller: Caller,
    workspace: str | None,
    project: str | None,
    *,
    write: bool = False,
    global_scope: bool = False,
) -> ResolvedScope:
    """Resolve and describe the scope; raise :class:`ScopeUnresolved` for an unanchored write."""
    if global_scope:
        with argument("workspace"):
            scope = Scope.of(workspace, GLOBAL_PROJECT)
        return await _described(runtime, scope, "global", "scope 'global' was requested")
    if project:
        with argument("project"):
            scope = Scope.of(workspace, project)
        return await _described(runtime, scope, "explicit", "workspace/project arguments")
    if workspace:
        with argument("workspace"):
            Scope.of(workspace, "x")
    if caller.session_id:
        session_id = caller.session_id
        found = await runtime.readers.aread(lambda c: _session_scope(c, session_id, workspace))
        if found is not None:
            reason = f"project of the calling session {caller.session_id}"
            return await _described(runtime, found, "session", reason)
    if caller.cwd:
        identity = resolve_project(caller.cwd)
        named = Scope.of(workspace or identity.workspace, identity.project)
        scope = await runtime.readers.aread(lambda c: project_moves.aliased(c, named))
        reason = f"project of the launch directory {caller.cwd} (from its {identity.source})"
        return await _described(runtime, scope, "launch_dir", reason)
    if write:
        raise ScopeUnresolved(
            "no project for this write: pass workspace and project, or connect through "
            "`ai-memory mcp-bridge` so the session and launch directory are known"
        )
    settings = runtime.config.mcp
    scope = Scope.of(workspace or settings.default_workspace, settings.default_project)
    reason = "default project: no project argument, known session or launch directory"
    return await _described(runtime, scope, "default", reason)


async def _described(runtime: Runtime, scope: Scope, source: str, reason: str) -> ResolvedScope:
    exists = await runtime.readers.aread(lambda conn: pages.project_exists(conn, scope))
    return ResolvedScope(scope, source, reason, exists)


def _session_scope(
    conn: sqlite3.Connection, session_id: str, workspace: str | None
) -> Scope | None:
    """The session's project; with an explicit workspace, only a session in it counts."""
    row = conn.execute(SESSION_PROJECT, (session_id, workspace, workspace)).fetchone()
    return Scope(row["workspace"], row["project"]) if row is not None else None


def _clean(value: str | None) -> str | None:
    """Header values arrive percent-encoded (paths and ids need not be ASCII)."""
    value = unquote((value or "").strip())
    return value[:1024] or None


async def with_session(
    runtime: Runtime, caller: Caller, scope: Scope, owner: int | None = None
) -> Caller:
    """The caller, with its session id inferred when the transport sent none.

    Only an unambiguous match counts: exactly one open session of ``scope`` that
    ``owner`` captured in the caller's launch directory (and of its agent, when
    known). Handoff claims and "the newest other session" need it to tell the
    caller apart.
    """
    if caller.session_id or not caller.cwd:
        return caller
    args = (scope.workspace, scope.project, caller.agent, caller.agent, owner)
    rows = await runtime.readers.aread(lambda conn: conn.execute(OPEN_SESSIONS, args).fetchall())
    here = [row["session_id"] for row in rows if same_place(row["cwd"], caller.cwd)]
    if len(here) != 1:
        return caller
    return Caller(session_id=here[0], cwd=caller.cwd, agent=caller.agent)
