"""Old project names that lead to the project they were renamed, moved or merged into.

A checkout resolves its project on the client (marker, remote, folder name), so
after a rename its hooks still name the old project. The capture service maps
each event's scope through this table before storing it or building a brief.
The table is small and changes only by a hygiene operation, so it is held in
memory and reloaded when one ran: no query on the hook's hot path.
"""

from __future__ import annotations

from dataclasses import replace
from types import MappingProxyType
from typing import TYPE_CHECKING

from ai_memory.core.identity import Scope
from ai_memory.store import project_moves
from ai_memory.store.readers import ReaderPool

if TYPE_CHECKING:
    from ai_memory.hooks.ingest import HookEvent


class ProjectAliases:
    def __init__(self, readers: ReaderPool) -> None:
        self._readers = readers
        self._map: MappingProxyType[Scope, Scope] = MappingProxyType({})
        self.reload()

    def reload(self) -> None:
        """Read the table again (after a rename, move or merge); swapped whole, so a
        concurrent lookup sees the old map or the new one, never half of each."""
        self._map = MappingProxyType(self._readers.read(project_moves.aliases))

    def scope(self, scope: Scope) -> Scope:
        return self._map.get(scope, scope)

    def event(self, event: HookEvent) -> HookEvent:
        target = self._map.get(event.scope)
        return event if target is None else replace(event, scope=target)
