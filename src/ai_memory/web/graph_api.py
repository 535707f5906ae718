"""``GET /api/v1/graph``: a project's link graph as JSON (what the UI's graph page draws)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request

from ai_memory.core.errors import NotFound
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.web.access import require_read
from ai_memory.web.deps import get_runtime
from ai_memory.web.graph import MAX_NODES, graph

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


async def project_graph(runtime: Runtime, scope: Scope, limit: int) -> dict[str, Any]:
    def query(conn: Any) -> dict[str, Any]:
        if not pages.project_exists(conn, scope):
            raise NotFound(f"no project {scope}")
        return graph(conn, scope, limit)

    result: dict[str, Any] = await runtime.readers.aread(query)
    return result


@router.get("/graph")
async def graph_route(
    request: Request,
    runtime: RuntimeDep,
    project: str,
    workspace: str | None = None,
    limit: Annotated[int, Query(ge=1, le=2000)] = MAX_NODES,
) -> dict[str, Any]:
    """The ``limit`` best-linked pages of the project and the links among them."""
    scope = Scope.of(workspace, project)
    await require_read(request, scope)
    return await project_graph(runtime, scope, limit)
