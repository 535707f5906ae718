"""The bridge between MCP tools and the retrieval search (one call, typed in and out)."""

from __future__ import annotations

from typing import Any

from ai_memory.core.errors import Unavailable
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime


async def best_page(runtime: Runtime, scope: Scope, query: str) -> dict[str, Any] | None:
    """The best page for ``query`` in ``scope``: workspace, project, path, score."""
    raise Unavailable("search is not available in this build")
