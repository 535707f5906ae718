"""``GET /api/v1/search``: the same search, and the same JSON, as the MCP tool ``memory_query``.

The query string goes straight into :class:`SearchRequest`, which validates
every field and names the one that is wrong: declaring each as a FastAPI
parameter validated them a second time, which took longer than many searches.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from starlette.datastructures import QueryParams

from ai_memory.retrieval.backfill import vector_status
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search as run_search
from ai_memory.runtime import Runtime
from ai_memory.web.access import admin_only
from ai_memory.web.deps import get_runtime

SEARCH_PATH = "/api/v1/search"  # also answered ahead of the router: web/search_fast.py
router = APIRouter(prefix="/api/v1")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]

# Query parameter -> SearchRequest field, for the single-valued ones.
FIELDS = {
    "q": "query",
    "workspace": "workspace",
    "project": "project",
    "global": "global",
    "limit": "limit",
    "kind": "kind",
    "tier": "tier",
    "tag": "tag",
    "path_prefix": "path_prefix",
    "include_superseded": "include_superseded",
    "include_expired": "include_expired",
    "as_of": "as_of",
    "pin_first": "pin_first",
    "explain": "explain",
}


@router.get("/search")
async def search(request: Request) -> Response:
    """``q`` (plain words or FTS5 syntax), ``project`` / ``workspace`` / ``scope``
    (repeatable) / ``global``, ``limit``, the filters and ``explain``: the
    fields of :class:`SearchRequest`. The caller's unreadable projects are left out
    (``global``, the shared project) or refused (named: 403) inside the search."""
    given = request.query_params
    if "q" not in given:
        raise RequestValidationError(
            [{"type": "missing", "loc": ("query", "q"), "msg": "Field required", "input": None}]
        )
    data = request_data(given)
    runtime: Runtime = request.app.state.runtime
    if runtime.config.answers.rerank:
        from ai_memory.consolidate.rerank import reranked_json  # the LLM edge

        body = await reranked_json(runtime, SearchRequest.parse(data), request.app.state)
        return Response(body, media_type="application/json")
    response = await run_search(runtime.retrieval, SearchRequest.parse(data))
    # Encoded by the model itself: FastAPI's generic encoder would walk it again (~2 ms).
    return Response(response.to_json(), media_type="application/json")


def request_data(given: QueryParams) -> dict[str, Any]:
    """The query string as :class:`SearchRequest`'s fields, not validated yet: a field
    given twice counts with its last value, ``scope`` with all of them."""
    data: dict[str, Any] = {field: given[name] for name, field in FIELDS.items() if name in given}
    scopes = given.getlist("scope")
    if scopes:
        data["scopes"] = scopes
    return data


@router.get("/embeddings", dependencies=[Depends(admin_only)])
async def embeddings(runtime: RuntimeDep) -> dict[str, Any]:
    """How far the vectors are: pages embedded with the current model, pending, stale.
    Counts over every project, so for admins only."""
    index = runtime.retrieval.index
    if index is None:
        return {"provider": "none", "pending": 0}
    return await runtime.readers.aread(lambda conn: vector_status(conn, index.embedder))
