"""Which projects a search covers, from the request's workspace/project/scopes/global."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import DEFAULT_WORKSPACE, GLOBAL_PROJECT, Scope
from ai_memory.retrieval.models import SearchRequest


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
