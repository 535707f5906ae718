"""Changing pages over MCP: write (compare-and-write), patch a section, delete, and
feedback on a page."""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import PreconditionFailed
from ai_memory.core.identity import PageRef
from ai_memory.core.principal import Access
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.mcp.annotations import change
from ai_memory.mcp.args import (
    ExpectedPageId,
    KindName,
    PageId,
    PagePath,
    Project,
    SqlId,
    TierName,
    Workspace,
)
from ai_memory.mcp.deps import Ctx, ToolDeps, answer
from ai_memory.mcp.errors import InvalidArgument, argument
from ai_memory.mcp.sections import PatchOp, apply_patch, sections
from ai_memory.mcp.tools_read import page_ref
from ai_memory.runtime import Runtime
from ai_memory.store.feedback import add_feedback

ACTOR = "mcp"


MAX_REASON_BYTES = 2000


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _write_tool(deps),
        name="memory_write_page",
        title="Write a memory page",
        description="Create or replace a page (the old version stays in history). Use to record "
        "a decision, gotcha, procedure or concept worth keeping for later sessions. Pass "
        "expected_page_id (from a read) to replace safely, or create_only for a new page; a "
        "failed precondition writes nothing and returns the current page_id.",
        annotations=change(destructive=False, idempotent=True),
        structured_output=False,
    )
    server.add_tool(
        _patch_tool(deps),
        name="memory_patch_page",
        title="Patch a memory page",
        description="Change part of a page without resending it: append at the end or to a "
        "section, add a section, or replace a section (needs that section's hash from "
        "memory_read_page). Needs the page's current page_id; conflicts fail before writing.",
        annotations=change(destructive=False, idempotent=False),
        structured_output=False,
    )
    server.add_tool(
        _delete_tool(deps),
        name="memory_delete_page",
        title="Delete a memory page",
        description="Delete a page by exact path (its history stays readable). Use only when a "
        "page is wrong or obsolete and superseding it is not enough.",
        annotations=change(destructive=True, idempotent=True),
        structured_output=False,
    )
    server.add_tool(
        _feedback_tool(deps),
        name="memory_feedback",
        title="Rate a memory page",
        description="Tell memory whether a page helped: helpful, not_helpful, stale or wrong "
        "(with an optional reason). Feedback adjusts how pages rank later.",
        annotations=change(destructive=False, idempotent=False),
        structured_output=False,
    )


def _write_tool(deps: ToolDeps) -> Any:
    async def memory_write_page(
        ctx: Ctx,
        path: PagePath,
        body: Annotated[str, Field(description="Markdown body (may start with frontmatter)")],
        title: Annotated[str | None, Field(max_length=200)] = None,
        kind: KindName | None = None,
        tier: TierName | None = None,
        tags: Annotated[
            list[Annotated[str, Field(max_length=100)]] | None, Field(max_length=50)
        ] = None,
        entities: Annotated[
            list[Annotated[str, Field(max_length=200)]] | None,
            Field(max_length=100, description="Names this page is about (files, services, people)"),
        ] = None,
        pinned: Annotated[bool | None, Field(description="Show in every briefing")] = None,
        expires_at: Annotated[
            str | None, Field(description="RFC 3339 time or a date after which it is stale")
        ] = None,
        scope: Annotated[
            Literal["project", "global"],
            Field(description="'global' writes to the shared _global project"),
        ] = "project",
        expected_page_id: ExpectedPageId = None,
        create_only: Annotated[bool, Field(description="Write only if no such page")] = False,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(
                ctx, workspace, project, write=True, global_scope=scope == "global"
            )
            ref = page_ref(resolved, path)
            meta = {
                "title": title,
                "kind": kind,
                "tier": tier,
                "tags": tags,
                "entities": entities,
                "pinned": pinned,
                "expires_at": parse_expiry(expires_at) if expires_at else None,
            }
            with argument("body"):
                result = await deps.runtime().wiki.awrite_page(
                    ref,
                    body,
                    meta,
                    expected_page_id=expected_page_id,
                    create_only=create_only,
                    actor=ACTOR,
                )
            return {**result.to_dict(), "scope": resolved.to_dict()}

        return await answer(work)

    return memory_write_page


def parse_expiry(value: str) -> str:
    """RFC 3339 (``2026-01-31T12:00:00Z``) or a plain date; stored normalised."""
    text = value.strip()
    try:
        if len(text) == 10:
            return date.fromisoformat(text).isoformat()
        moment = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError as exc:
        raise InvalidArgument(
            "expires_at", f"{value!r} is neither an RFC 3339 time nor a date (YYYY-MM-DD)"
        ) from exc
    if moment.tzinfo is None:
        raise InvalidArgument("expires_at", f"{value!r} has no time zone (add Z or +hh:mm)")
    return moment.isoformat()


def _patch_tool(deps: ToolDeps) -> Any:
    async def memory_patch_page(
        ctx: Ctx,
        path: PagePath,
        expected_page_id: Annotated[
            SqlId, Field(description="The page_id you read; the patch fails if it moved on")
        ],
        op: Annotated[
            PatchOp,
            Field(description="append | append_to_section | add_section | replace_section"),
        ],
        content: Annotated[str, Field(description="Markdown to add or put in place")],
        section: Annotated[
            str | None,
            Field(max_length=300, description="Heading of the section (new heading for add)"),
        ] = None,
        section_hash: Annotated[
            str | None,
            Field(max_length=64, description="The section's hash from memory_read_page"),
        ] = None,
        level: Annotated[int, Field(ge=1, le=6, description="Heading level for add")] = 2,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=True)
            ref = page_ref(resolved, path)
            runtime = deps.runtime()
            page = await runtime.wiki.aread_page(ref)
            if page["page_id"] != expected_page_id:
                raise PreconditionFailed(
                    f"page {ref} is at page_id {page['page_id']}, not the expected "
                    f"{expected_page_id}",
                    page["page_id"],
                )
            body = apply_patch(
                page["body"], op, content, section=section, section_hash=section_hash, level=level
            )
            with argument("content"):
                result = await runtime.wiki.awrite_page(
                    ref, body, None, expected_page_id=expected_page_id, actor=ACTOR
                )
            return {
                **result.to_dict(),
                "sections": [s.to_dict() for s in sections(body)],
                "scope": resolved.to_dict(),
            }

        return await answer(work)

    return memory_patch_page


def _delete_tool(deps: ToolDeps) -> Any:
    async def memory_delete_page(
        ctx: Ctx,
        path: PagePath,
        expected_page_id: PageId = None,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=True)
            ref = page_ref(resolved, path)
            page_id = await deps.runtime().wiki.adelete_page(
                ref, expected_page_id=expected_page_id, actor=ACTOR
            )
            return {
                "deleted": True,
                "page_id": page_id,
                "path": ref.path,
                "scope": resolved.to_dict(),
            }

        return await answer(work)

    return memory_delete_page


def _feedback_tool(deps: ToolDeps) -> Any:
    async def memory_feedback(
        ctx: Ctx,
        path: PagePath,
        signal: Annotated[
            Literal["helpful", "not_helpful", "stale", "wrong"],
            Field(description="How the page served you"),
        ],
        reason: Annotated[str | None, Field(max_length=2000)] = None,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, need=Access.WRITE)
            ref = page_ref(resolved, path)
            runtime = deps.runtime()
            page = await runtime.wiki.aread_page(ref)
            return {
                "recorded": True,
                "feedback_id": await _record(runtime, ref, page["page_id"], signal, reason),
                "path": ref.path,
                "page_id": page["page_id"],
                "signal": signal,
                "scope": resolved.to_dict(),
            }

        return await answer(work)

    return memory_feedback


async def _record(
    runtime: Runtime, ref: PageRef, page_id: int, signal: str, reason: str | None
) -> int:
    now = now_iso()
    if reason:  # free text from an agent: redacted and capped like any capture
        reason = await asyncio.to_thread(clean_reason, reason, runtime.sanitizer)
    return await runtime.writer.run(
        lambda conn: add_feedback(conn, ref, page_id, signal, reason, now),
        timeout=runtime.config.store.write_timeout_s,
    )


def clean_reason(reason: str, sanitizer: Sanitizer) -> str:
    """A feedback reason as stored: secrets redacted, controls stripped, capped."""
    return sanitizer.clean(reason, MAX_REASON_BYTES)
