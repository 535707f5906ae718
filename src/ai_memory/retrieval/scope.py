"""Which projects a search covers, from the request's workspace/project/scopes/global."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import DEFAULT_WORKSPACE, GLOBAL_PROJECT, Scope
from ai_memory.core.principal import Access, Principal
from ai_memory.retrieval.models import SearchRequest
from ai_memory.store.project_access import authorize, hidden_projects

PROJECTS = "SELECT workspace, name FROM projects ORDER BY workspace, name"
# Matches no page: what "every project you may read" is when that is none of them.
NOWHERE = Scope("", "")


@dataclass(frozen=True, slots=True)
class SearchScope:
    """``main`` empty means every project; ``shared`` is searched beside it and listed apart."""

    main: tuple[Scope, ...]
    shared: Scope | None
    everything: bool

    def describe(self) -> dict[str, Any]:
        return {
            "projects": [str(s) for s in self.main] if not self.everything else ["*"],
            "global": self.everything,
            "shared": str(self.shared) if self.shared else None,
        }


def resolve_scope(request: SearchRequest) -> SearchScope:
    workspace = request.workspace or DEFAULT_WORKSPACE
    if request.global_:
        return SearchScope((), None, True)
    named: list[Scope] = []
    if request.project:
        named.append(Scope.of(workspace, request.project))
    for item in request.scopes or []:
        ws, sep, project = item.partition("/")
        named.append(Scope.of(ws, project) if sep else Scope.of(workspace, item))
    if not named:
        raise InvalidInput("a search needs a project, scopes, or global=true")
    main = tuple(dict.fromkeys(named))
    shared = Scope(workspace, GLOBAL_PROJECT)
    if shared in main:
        return SearchScope(main, None, False)
    return SearchScope(main, shared, False)


def restrict(found: SearchScope, conn: sqlite3.Connection, who: Principal) -> SearchScope:
    """Leave out the projects ``who`` may not read, before any stream reads a row.

    A project named outright that ``who`` may not read is refused (403); one
    reached through ``global=true`` or the shared project is simply absent.
    With nothing hidden (the operator, admins, no restricted project) the scope
    is returned as it was, so those searches run the same SQL as ever."""
    if who.admin:
        return found
    hide = hidden_projects(conn, who)
    if not hide:
        return found
    for scope in found.main:
        if scope in hide:
            authorize(conn, who, scope, Access.READ)
    shared = None if found.shared in hide else found.shared
    if not found.everything:
        return SearchScope(found.main, shared, False)
    readable = tuple(
        s for s in (Scope(r[0], r[1]) for r in conn.execute(PROJECTS)) if s not in hide
    )
    return SearchScope(readable or (NOWHERE,), None, True)
