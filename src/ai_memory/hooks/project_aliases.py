"""Old project names that lead to the project they were renamed, moved or merged into,
and sessions moved to another project that keep streaming under their old one.

A checkout resolves its project on the client (marker, remote, folder name), so
after a rename its hooks still name the old project. The capture service maps
each event's scope through this table before storing it or building a brief.
The table is small and changes only by a hygiene operation, so it is held in
memory and reloaded when one ran: no query on the hook's hot path. A session
still open when ``move-session`` moved it goes on sending events under the
project its checkout resolves to; they follow it, so it stays in one place.
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
        self._sessions: MappingProxyType[tuple[Scope, str], Scope] = MappingProxyType({})
        self.reload()

    def reload(self) -> None:
        """Read the tables again (after a rename, move, merge or session move); each map is
        swapped whole, so a concurrent lookup never sees half of one."""
        self._map = MappingProxyType(self._readers.read(project_moves.aliases))
        self._sessions = MappingProxyType(self._readers.read(project_moves.session_moves))

    def scope(self, scope: Scope) -> Scope:
        return self._map.get(scope, scope)

    def event(self, event: HookEvent) -> HookEvent:
        if not self._map and not self._sessions:  # nothing renamed or moved: most servers
            return event
        scope = self.scope(event.scope)
        sid = event.observation.session_id
        moved = self._sessions.get((event.scope, sid)) or self._sessions.get((scope, sid))
        if moved is not None:
            scope = self.scope(moved)
        if scope == event.scope:
            return event
        return replace(event, scope=scope, asked=event.asked or event.scope)
