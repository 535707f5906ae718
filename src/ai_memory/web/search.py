"""``GET /api/v1/search``: the same search, and the same JSON, as the MCP tool ``memory_query``."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query
from fastapi.responses import JSONResponse

from ai_memory.retrieval.backfill import vector_status
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search as run_search
from ai_memory.runtime import Runtime
from ai_memory.web.deps import get_runtime

router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]


@router.get("/search")
async def search(
    runtime: RuntimeDep,
    q: Annotated[str, Query(description="What to look for, in plain words or FTS5 syntax.")],
    workspace: str | None = None,
    project: str | None = None,
    scope: Annotated[list[str] | None, Query(description="Another project; repeatable.")] = None,
    global_: Annotated[bool, Query(alias="global")] = False,
    limit: int = 10,
    kind: str | None = None,
    tier: str | None = None,
    tag: str | None = None,
    path_prefix: str | None = None,
    include_superseded: bool = False,
    include_expired: bool = False,
    as_of: str | None = None,
    pin_first: bool = False,
    explain: bool = False,
) -> JSONResponse:
    request = SearchRequest.parse(
        {
            "query": q,
            "workspace": workspace,
            "project": project,
            "scopes": scope,
            "global": global_,
            "limit": limit,
            "kind": kind,
            "tier": tier,
            "tag": tag,
            "path_prefix": path_prefix,
            "include_superseded": include_superseded,
            "include_expired": include_expired,
            "as_of": as_of,
            "pin_first": pin_first,
            "explain": explain,
        }
    )
    response = await run_search(runtime.retrieval, request)
    # Plain JSON types already: FastAPI's generic encoder would walk them again (~2 ms).
    return JSONResponse(response.to_dict())


@router.get("/embeddings")
async def embeddings(runtime: RuntimeDep) -> dict[str, Any]:
    """How far the vectors are: pages embedded with the current model, pending, stale."""
    index = runtime.retrieval.index
    if index is None:
        return {"provider": "none", "pending": 0}
    return await runtime.readers.aread(lambda conn: vector_status(conn, index.embedder))
