"""memory_query: the retrieval search over MCP, answered from the resolved scope."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from ai_memory.consolidate.edge import Slots
from ai_memory.core.fence import NOTE
from ai_memory.mcp.annotations import READ
from ai_memory.mcp.args import KindName, Project, TierName, Workspace
from ai_memory.mcp.deps import Ctx, ToolDeps
from ai_memory.mcp.deps import answer as tool_answer
from ai_memory.mcp.errors import InvalidArgument
from ai_memory.retrieval.models import MAX_QUERY_CHARS, SearchRequest
from ai_memory.retrieval.search import search

QueryText = Annotated[str | None, Field(max_length=MAX_QUERY_CHARS)]
Count = Annotated[int | None, Field(ge=1, le=100)]


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _query_tool(deps, Slots()),
        name="memory_query",
        title="Search memory",
        description="Search the project's memory (pages, and raw session evidence when no page "
        "matches) before re-deriving something an earlier session may know: how a part works, "
        "why it is that way, what failed, what was decided. Returns ranked hits with snippets; "
        "read one in full with memory_read_page. answer=true adds a short cited answer when an "
        "LLM provider is configured. q/search and n/top_k are accepted aliases.",
        annotations=READ,
        structured_output=False,
    )


def _query_tool(deps: ToolDeps, slots: Slots) -> Any:
    async def memory_query(
        ctx: Ctx,
        query: Annotated[
            str | None,
            Field(max_length=MAX_QUERY_CHARS, description="What to look for, in plain words"),
        ] = None,
        limit: Annotated[int | None, Field(ge=1, le=100, description="Hits (1-100, 10)")] = None,
        kind: KindName | None = None,
        tier: TierName | None = None,
        tag: Annotated[str | None, Field(max_length=200)] = None,
        path_prefix: Annotated[
            str | None, Field(max_length=500, description="Only pages under this folder")
        ] = None,
        scopes: Annotated[
            list[str] | None,
            Field(max_length=50, description="Search these projects ('project' or 'ws/project')"),
        ] = None,
        global_: Annotated[bool, Field(description="Search every project")] = False,
        include_superseded: bool = False,
        include_expired: bool = False,
        as_of: Annotated[
            str | None, Field(max_length=64, description="Answer as memory stood at this time")
        ] = None,
        pin_first: Annotated[bool, Field(description="Pinned pages first")] = False,
        explain: Annotated[bool, Field(description="Per-stream ranks and scores")] = False,
        answer: Annotated[
            bool, Field(description="Also a short answer citing the hits (needs a provider)")
        ] = False,
        workspace: Workspace = None,
        project: Project = None,
        q: QueryText = None,
        search_: Annotated[str | None, Field(max_length=MAX_QUERY_CHARS)] = None,
        n: Count = None,
        top_k: Count = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            text = query or q or search_
            if not text or not text.strip():
                raise InvalidArgument("query", "say what to look for (query, q or search)")
            resolved = await deps.scope(ctx, workspace, project)
            fields = {
                "query": text,
                "limit": limit or n or top_k or 10,
                "workspace": resolved.scope.workspace,
                "project": None if scopes or global_ else resolved.scope.project,
                "scopes": scopes,
                "global": global_,
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
            request = SearchRequest.parse(fields)  # its errors name the field
            runtime = deps.runtime()
            if answer or runtime.config.answers.rerank:
                from ai_memory.consolidate.answer import answered_search  # the LLM edge

                data = await answered_search(runtime, request, answer=answer, slots=slots)
            else:
                data = (await search(runtime.retrieval, request)).to_dict()
            return {**data, "note": NOTE, "scope": resolved.to_dict()}

        return await tool_answer(work)

    return memory_query
