"""Bulk writes for importers: preflight a target project, then write up to 100 pages at once.

A batch goes only into a project that exists and the caller may write, and lands whole
or not at all (:mod:`ai_memory.wiki.batch_check`): an importer learns every bad entry
from one answer and nothing half-imported is left behind.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import BaseModel, ConfigDict, Field

from ai_memory.core.errors import NotFound
from ai_memory.core.principal import Access, Principal
from ai_memory.mcp.annotations import READ, change
from ai_memory.mcp.args import ExpectedPageId, KindName, PagePath, Project, TierName, Workspace
from ai_memory.mcp.deps import Ctx, ToolDeps, answer, principal
from ai_memory.mcp.scope import ResolvedScope
from ai_memory.mcp.tools_write import ACTOR, parse_expiry
from ai_memory.store import project_access
from ai_memory.wiki.batch_check import MAX_ENTRIES, Entry, awrite_entries, summary

META_FIELDS = ("title", "kind", "tier", "tags", "entities", "pinned", "expires_at", "summary")


class BatchPage(BaseModel):
    """One page of a batch: the fields memory_write_page takes, with its own preconditions."""

    model_config = ConfigDict(extra="forbid")

    path: PagePath
    body: Annotated[str, Field(description="Markdown body (may start with frontmatter)")]
    title: Annotated[str | None, Field(max_length=200)] = None
    kind: KindName | None = None
    tier: TierName | None = None
    tags: Annotated[list[Annotated[str, Field(max_length=100)]] | None, Field(max_length=50)] = None
    entities: Annotated[
        list[Annotated[str, Field(max_length=200)]] | None, Field(max_length=100)
    ] = None
    pinned: bool | None = None
    expires_at: Annotated[str | None, Field(max_length=64)] = None
    summary: Annotated[str | None, Field(max_length=2000)] = None
    expected_page_id: ExpectedPageId = None
    create_only: Annotated[bool, Field(description="Write only if no such page")] = False

    def entry(self) -> Entry:
        meta = {name: getattr(self, name) for name in META_FIELDS}
        return Entry(self.path, self.body, meta, self.expected_page_id, self.create_only)


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _resolve_tool(deps),
        name="memory_resolve_write_target",
        title="Check where a write would land",
        description="Before a bulk write: which project workspace/project resolve to, whether "
        "it exists and whether you may write it, and why. Creates nothing.",
        annotations=READ,
        structured_output=False,
    )
    server.add_tool(
        _batch_tool(deps),
        name="memory_write_pages_batch",
        title="Write many pages at once",
        description="Write 1-100 pages into one existing project, all or nothing. Each page "
        "may carry create_only or expected_page_id; if any entry fails, nothing is written "
        "and the answer names every failing entry's index and reason.",
        annotations=change(destructive=False, idempotent=True),
        structured_output=False,
    )


def _resolve_tool(deps: ToolDeps) -> Any:
    async def memory_resolve_write_target(
        ctx: Ctx, workspace: Workspace = None, project: Project = None
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=True, need=Access.READ)
            who = principal(ctx)
            scope = resolved.scope
            have = await deps.runtime().readers.aread(
                lambda conn: project_access.access(conn, who, scope)
            )
            return {
                "scope": resolved.to_dict(),
                "exists": resolved.exists,
                "access": have.name.lower(),
                "may_write": resolved.exists and have >= Access.WRITE,
                "reason": _target_reason(resolved, who, have),
            }

        return await answer(work)

    return memory_resolve_write_target


def _target_reason(resolved: ResolvedScope, who: Principal, have: Access) -> str:
    scope = resolved.scope
    if not resolved.exists:
        return (
            f"project {scope} does not exist (nothing was created); a batch writes only into "
            "an existing project"
        )
    if have < Access.WRITE:
        return f"user {who.name!r} may only read project {scope}"
    return f"user {who.name!r} may write to project {scope} ({resolved.reason})"


def _batch_tool(deps: ToolDeps) -> Any:
    async def memory_write_pages_batch(
        ctx: Ctx,
        pages: Annotated[
            list[BatchPage],
            Field(min_length=1, max_length=MAX_ENTRIES, description="The pages, 1-100"),
        ],
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=True)
            if not resolved.exists:
                raise NotFound(
                    f"no project {resolved.scope}: a batch writes only into an existing "
                    "project (check with memory_resolve_write_target)"
                )
            results = await awrite_entries(
                deps.runtime().wiki,
                resolved.scope,
                [page.entry() for page in pages],
                actor=ACTOR,
                fields=_stored_fields,
            )
            return {**summary(results), "scope": resolved.to_dict()}

        return await answer(work)

    return memory_write_pages_batch


def _stored_fields(meta: Mapping[str, Any]) -> Mapping[str, Any]:
    expires_at = meta.get("expires_at")
    return {**meta, "expires_at": parse_expiry(expires_at) if expires_at else None}
