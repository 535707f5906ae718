"""The best page for a query, for memory_read_page's by-query mode."""

from __future__ import annotations

from typing import Any

from ai_memory.core.identity import Scope
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search
from ai_memory.runtime import Runtime


async def best_page(runtime: Runtime, scope: Scope, query: str) -> dict[str, Any] | None:
    """The top hit in ``scope`` (the shared _global project counts too), or None."""
    request = SearchRequest.parse(
        {"query": query, "limit": 1, "workspace": scope.workspace, "project": scope.project}
    )
    response = await search(runtime.retrieval, request)
    hits = response.hits or response.global_hits
    return hits[0].model_dump() if hits else None
