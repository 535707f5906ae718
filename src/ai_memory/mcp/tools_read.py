"""Reading pages over MCP: one page (by path or best match, with its sections and
related pages), and the most recent pages."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from ai_memory.core import fence
from ai_memory.core.errors import NotFound
from ai_memory.core.identity import PageRef
from ai_memory.mcp.annotations import READ
from ai_memory.mcp.args import (
    KindName,
    Limit,
    OptionalPagePath,
    PageId,
    Project,
    Version,
    Workspace,
)
from ai_memory.mcp.deps import Ctx, ToolDeps, answer
from ai_memory.mcp.errors import InvalidArgument, argument
from ai_memory.mcp.reinforce import reinforce
from ai_memory.mcp.related import MAX_DEPTH, MAX_PAGES, related_pages, visible
from ai_memory.mcp.scope import ResolvedScope
from ai_memory.mcp.search import best_page
from ai_memory.mcp.sections import sections

DEFAULT_MAX_CHARS = 12_000
MAX_CHARS = 64_000


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _read_tool(deps),
        name="memory_read_page",
        title="Read a memory page",
        description="Read one page in full: by exact path, or the best match of a query. "
        "Use after memory_query when a hit looks relevant, or to get the page_id and "
        "section hashes you need before memory_write_page / memory_patch_page. "
        "include_related also lists pages linked to or from it.",
        annotations=READ,
        structured_output=False,
    )
    server.add_tool(
        _recent_tool(deps),
        name="memory_recent",
        title="Recently written pages",
        description="List the project's most recently written pages (no bodies). Use to see "
        "what changed lately, e.g. at the start of a task.",
        annotations=READ,
        structured_output=False,
    )


def page_ref(resolved: ResolvedScope, path: str) -> PageRef:
    with argument("path"):
        return resolved.scope.page(path)


def _read_tool(deps: ToolDeps) -> Any:
    async def memory_read_page(
        ctx: Ctx,
        path: OptionalPagePath = None,
        query: Annotated[
            str | None,
            Field(max_length=2000, description="Read the best match of this query instead"),
        ] = None,
        workspace: Workspace = None,
        project: Project = None,
        page_id: PageId = None,
        version: Version = None,
        max_chars: Annotated[
            int, Field(ge=200, le=MAX_CHARS, description="Cap on body characters returned")
        ] = DEFAULT_MAX_CHARS,
        include_related: Annotated[
            bool, Field(description="Also list linked pages (both directions)")
        ] = False,
        related_depth: Annotated[int, Field(ge=1, le=MAX_DEPTH)] = 1,
        related_limit: Annotated[int, Field(ge=1, le=MAX_PAGES)] = 20,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            if bool(path) == bool(query):
                raise InvalidArgument("path", "give exactly one of path or query")
            resolved = await deps.scope(ctx, workspace, project)
            runtime = deps.runtime()
            if query:
                ref, matched = await _best_match(deps, resolved, query)
            else:
                ref, matched = page_ref(resolved, path or ""), None
            page = await runtime.wiki.aread_page(ref, version=version, page_id=page_id)
            hidden = await deps.hidden(ctx)
            page["links"] = visible(page["links"], hidden)
            page["backlinks"] = visible(page["backlinks"], hidden)
            data = _page_view(page, max_chars)
            if matched is not None:
                data["matched_query"] = matched
            shown = [page["page_id"]] if page["is_latest"] else []
            if include_related:
                data["related"] = await runtime.readers.aread(
                    lambda conn: related_pages(
                        conn, ref, related_depth, related_limit, shown, hidden
                    )
                )
            reinforce(runtime, shown)
            data["note"] = fence.NOTE
            data["scope"] = resolved.to_dict()
            return data

        return await answer(work)

    return memory_read_page


async def _best_match(
    deps: ToolDeps, resolved: ResolvedScope, query: str
) -> tuple[PageRef, dict[str, Any]]:
    hit = await best_page(deps.runtime(), resolved.scope, query)
    if hit is None:
        raise NotFound(f"no page matches {query!r} in {resolved.scope}")
    ref = PageRef(hit["workspace"], hit["project"], hit["path"])
    return ref, {"query": query, "score": hit.get("score")}


def _page_view(page: dict[str, Any], max_chars: int) -> dict[str, Any]:
    """The page for an agent; section hashes are those of the stored text, so patches
    match (:func:`ai_memory.mcp.deps.answer` neutralises every field on the way out)."""
    body: str = page["body"]
    return {
        "workspace": page["workspace"],
        "project": page["project"],
        "path": page["path"],
        "page_id": page["page_id"],
        "version": page["version"],
        "is_latest": page["is_latest"],
        "title": page["title"],
        "kind": page["kind"],
        "tier": page["tier"],
        "tags": page["tags"],
        "pinned": page["pinned"],
        "expires_at": page["expires_at"],
        "updated": page["created_at"],
        "frontmatter": page["frontmatter"],
        "body": body[:max_chars],
        "truncated": len(body) > max_chars,
        "total_chars": len(body),
        "sections": [s.to_dict() for s in sections(body)],
        "links": page["links"],
        "backlinks": page["backlinks"],
    }


def _recent_tool(deps: ToolDeps) -> Any:
    async def memory_recent(
        ctx: Ctx,
        limit: Limit = 20,
        kind: KindName | None = None,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project)
            fetch = limit if kind is None else min(limit * 10, 1000)
            rows = await deps.runtime().wiki.arecent(resolved.scope, fetch)
            picked = [r for r in rows if kind is None or r["kind"] == kind][:limit]
            pages = [_summary(r) for r in picked]
            return {"pages": pages, "note": fence.NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_recent


def _summary(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": row["path"],
        "title": row["title"],
        "kind": row["kind"],
        "page_id": row["page_id"],
        "version": row["version"],
        "pinned": row["pinned"],
        "updated": row["created_at"],
    }
