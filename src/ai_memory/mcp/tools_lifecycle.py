"""Lifecycle tools: the forget sweep, lint, and restoring a page from git."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from ai_memory.core.principal import Access
from ai_memory.maintenance import restore
from ai_memory.maintenance.lint import lint_project
from ai_memory.maintenance.sweep import Sweeper
from ai_memory.mcp.annotations import change
from ai_memory.mcp.args import PagePath, Project, Workspace
from ai_memory.mcp.deps import Ctx, ToolDeps, answer
from ai_memory.mcp.tools_read import page_ref


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _sweep_tool(deps),
        name="memory_forget_sweep",
        title="Forget sweep",
        description="Remove expired pages, evict cold episodic pages (a tombstone stays, git "
        "keeps the text), purge old tombstones and prune raw observations of summarised "
        "sessions, in the project. dry_run=true (the default) only reports what would go.",
        annotations=change(destructive=True, idempotent=False),
        structured_output=False,
    )
    server.add_tool(
        _lint_tool(deps),
        name="memory_lint",
        title="Lint the project",
        description="Check the project's pages (dangling links, orphans, broken frontmatter, "
        "duplicate titles, pages flagged stale or wrong, expired pages still linked, cold "
        "pages) and write the findings to _lint/report.md.",
        annotations=change(destructive=False, idempotent=True),
        structured_output=False,
    )
    server.add_tool(
        _restore_tool(deps),
        name="memory_restore_page",
        title="Restore a page",
        description="Write a page back from a git checkpoint as a new version; brings back an "
        "evicted, expired or deleted page. Without rev: as it was removed (its tombstone), "
        "else the newest checkpoint that holds it.",
        annotations=change(destructive=False, idempotent=True),
        structured_output=False,
    )


def _sweep_tool(deps: ToolDeps) -> Any:
    async def memory_forget_sweep(
        ctx: Ctx,
        dry_run: Annotated[bool, Field(description="Only report what would go")] = True,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            need = Access.READ if dry_run else Access.WRITE
            resolved = await deps.scope(ctx, workspace, project, need=need)
            runtime = deps.runtime()
            sweeper = Sweeper(runtime.wiki, runtime.config)
            report = await asyncio.to_thread(sweeper.sweep, dry_run=dry_run, scope=resolved.scope)
            return {**report.to_dict(), "scope": resolved.to_dict()}

        return await answer(work)

    return memory_forget_sweep


def _lint_tool(deps: ToolDeps) -> Any:
    async def memory_lint(
        ctx: Ctx, workspace: Workspace = None, project: Project = None
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, need=Access.WRITE)
            runtime = deps.runtime()
            report = await asyncio.to_thread(
                lint_project, runtime.wiki, runtime.config, resolved.scope
            )
            return {**report, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_lint


def _restore_tool(deps: ToolDeps) -> Any:
    async def memory_restore_page(
        ctx: Ctx,
        path: PagePath,
        rev: Annotated[
            str | None, Field(max_length=200, description="A checkpoint commit id")
        ] = None,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, need=Access.WRITE)
            ref = page_ref(resolved, path)
            runtime = deps.runtime()
            result = await asyncio.to_thread(restore.restore_page, runtime.wiki, ref, rev)
            return {**result, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_restore_page
