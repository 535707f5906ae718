"""The WHERE clause every stream applies to the pages it returns."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ai_memory.core.identity import Scope


@dataclass(frozen=True, slots=True)
class PageFilter:
    """Which page versions a search may return; ``scopes`` empty means every project."""

    scopes: tuple[Scope, ...]
    kind: str | None = None
    tier: str | None = None
    tag: str | None = None
    path_prefix: str | None = None
    include_expired: bool = False
    as_of: str | None = None
    now: str = ""

    def where(self, alias: str = "p", *, latest: bool = True) -> tuple[str, list[Any]]:
        """SQL conditions on a page row ``alias`` (latest, or an older version)."""
        clauses, params = self.scope_clause(alias)
        clauses.append(f"{alias}.is_latest = {1 if latest else 0}")
        if self.kind:
            clauses.append(f"{alias}.kind = ?")
            params.append(self.kind)
        if self.tier:
            clauses.append(f"{alias}.tier = ?")
            params.append(self.tier)
        if self.tag:
            clauses.append(f"EXISTS (SELECT 1 FROM json_each({alias}.tags) t WHERE t.value = ?)")
            params.append(self.tag)
        if self.path_prefix:
            clauses.append(f"substr({alias}.path, 1, ?) = ?")
            params += [len(self.path_prefix), self.path_prefix]
        if not self.include_expired:
            clauses.append(f"({alias}.expires_at IS NULL OR {alias}.expires_at > ?)")
            params.append(self.as_of or self.now)
        if self.as_of:
            clauses.append(f"{alias}.created_at <= ?")
            params.append(self.as_of)
        return " AND ".join(clauses), params

    def scope_clause(self, alias: str) -> tuple[list[str], list[Any]]:
        if not self.scopes:
            return [], []
        if len(self.scopes) == 1:
            scope = self.scopes[0]
            return [f"{alias}.workspace = ? AND {alias}.project = ?"], [
                scope.workspace,
                scope.project,
            ]
        pairs = " OR ".join(f"({alias}.workspace = ? AND {alias}.project = ?)" for _ in self.scopes)
        params: list[Any] = []
        for scope in self.scopes:
            params += [scope.workspace, scope.project]
        return [f"({pairs})"], params
