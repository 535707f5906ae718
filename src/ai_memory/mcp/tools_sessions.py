"""Handoffs between agents, and reading what a session captured."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from ai_memory.core.fence import NOTE
from ai_memory.hooks.handoff_ops import (
    accept_handoff,
    begin_handoff,
    cancel_handoff,
    list_handoffs,
)
from ai_memory.hooks.handoffs import MAX_SUMMARY_CHARS, Viewer
from ai_memory.hooks.observations import session_observations
from ai_memory.mcp.annotations import READ, change
from ai_memory.mcp.args import BeforeId, HandoffId, Project, SqlId, Workspace
from ai_memory.mcp.deps import Ctx, ToolDeps, answer, caller, principal
from ai_memory.mcp.errors import argument
from ai_memory.mcp.scope import with_session

Items = Annotated[list[Annotated[str, Field(max_length=2000)]] | None, Field(max_length=50)]
AnyOwner = Annotated[
    bool, Field(description="Every user's handoffs, not only yours and shared ones (admins)")
]


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    tools: list[tuple[Any, str, str, str, ToolAnnotations]] = [
        (
            _begin_tool(deps),
            "memory_handoff_begin",
            "Leave a handoff",
            "Before you stop mid-task, leave a handoff for the next agent in this project: a "
            "summary, open questions, next steps, files touched and anything worth passing on. "
            "Your next agent gets it at session start or with memory_handoff_accept; "
            "shared=true publishes it to everyone who may read the project.",
            change(destructive=False, idempotent=False),
        ),
        (
            _list_tool(deps),
            "memory_handoff_list",
            "List handoffs",
            "See the project's handoffs you may claim (yours and shared ones; open ones by "
            "default) without claiming any.",
            READ,
        ),
        (
            _accept_tool(deps),
            "memory_handoff_accept",
            "Accept a handoff",
            "At the start of a task, claim the work another agent left open: a given handoff "
            "id, or the best open one. Answers claimed (with the handoff), consumed_by_hook "
            "(your session start already delivered it) or none_pending.",
            change(destructive=False, idempotent=False),
        ),
        (
            _cancel_tool(deps),
            "memory_handoff_cancel",
            "Cancel a handoff",
            "Withdraw an open handoff that no longer applies.",
            change(destructive=True, idempotent=True),
        ),
        (
            _observations_tool(deps),
            "memory_read_session_observations",
            "Read a session's observations",
            "Read what one of your sessions captured (prompts, tool calls, results; "
            "sanitized, capped), newest first and paged. Without session_id: your newest "
            "other session of the project, e.g. the agent that worked here before you.",
            READ,
        ),
    ]
    for fn, name, title, description, notes in tools:
        server.add_tool(
            fn,
            name=name,
            title=title,
            description=description,
            annotations=notes,
            structured_output=False,
        )


def _begin_tool(deps: ToolDeps) -> Any:
    async def memory_handoff_begin(
        ctx: Ctx,
        summary: Annotated[
            str,
            Field(
                min_length=1,
                max_length=MAX_SUMMARY_CHARS,
                description="Where things stand, in a few sentences",
            ),
        ],
        open_questions: Items = None,
        next_steps: Items = None,
        files_touched: Items = None,
        shared: Annotated[
            bool | Items,
            Field(
                description="true: everyone who may read the project sees and may claim it "
                "(default: only you). A list is taken as notes to pass on (links, commands)",
            ),
        ] = None,
        notes: Annotated[
            list[Annotated[str, Field(max_length=2000)]] | None,
            Field(max_length=50, description="Anything else worth passing on: links, commands"),
        ] = None,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=True)
            who = caller(ctx)
            passed_on = (shared if isinstance(shared, list) else []) + (notes or [])
            content = {
                "open_questions": open_questions or [],
                "next_steps": next_steps or [],
                "files_touched": files_touched or [],
                "shared": passed_on,
            }
            runtime = deps.runtime()
            with argument("summary"):
                handoff = await begin_handoff(
                    runtime.writer,
                    resolved.scope,
                    summary,
                    content=content,
                    from_agent=who.agent,
                    from_session=who.session_id,
                    cwd=who.cwd,
                    owner=principal(ctx).owner,
                    shared=shared is True,
                    sanitizer=runtime.sanitizer,
                )
            return {"handoff": handoff, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_handoff_begin


def _list_tool(deps: ToolDeps) -> Any:
    async def memory_handoff_list(
        ctx: Ctx,
        status: Literal["open", "claimed", "cancelled", "expired", "any"] = "open",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        any_owner: AnyOwner = False,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            viewer = Viewer.of(principal(ctx), any_owner)
            resolved = await deps.scope(ctx, workspace, project)
            found = await list_handoffs(
                deps.runtime().readers,
                resolved.scope,
                status=None if status == "any" else status,
                limit=limit,
                viewer=viewer,
            )
            return {"handoffs": found, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_handoff_list


def _accept_tool(deps: ToolDeps) -> Any:
    async def memory_handoff_accept(
        ctx: Ctx,
        handoff_id: Annotated[
            SqlId | None, Field(description="A specific handoff; default: the best open one")
        ] = None,
        any_owner: AnyOwner = False,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            viewer = Viewer.of(principal(ctx), any_owner)
            resolved = await deps.scope(ctx, workspace, project, write=True)
            who = await with_session(
                deps.runtime(), caller(ctx), resolved.scope, principal(ctx).owner
            )
            accepted = await accept_handoff(
                deps.runtime().writer,
                resolved.scope,
                handoff_id,
                agent=who.agent,
                session_id=who.session_id,
                cwd=who.cwd,
                viewer=viewer,
                sanitizer=deps.runtime().sanitizer,
            )
            return {**accepted, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_handoff_accept


def _cancel_tool(deps: ToolDeps) -> Any:
    async def memory_handoff_cancel(
        ctx: Ctx,
        handoff_id: HandoffId,
        any_owner: AnyOwner = False,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            viewer = Viewer.of(principal(ctx), any_owner)
            resolved = await deps.scope(ctx, workspace, project, write=True)
            with argument("handoff_id"):
                handoff = await cancel_handoff(
                    deps.runtime().writer, resolved.scope, handoff_id, viewer=viewer
                )
            return {"handoff": handoff, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_handoff_cancel


def _observations_tool(deps: ToolDeps) -> Any:
    async def memory_read_session_observations(
        ctx: Ctx,
        session_id: Annotated[
            str | None,
            Field(max_length=200, description="Default: your newest other session of the project"),
        ] = None,
        before_id: BeforeId = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 30,
        max_body_chars: Annotated[int, Field(ge=100, le=20_000)] = 2_000,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project)
            who = await with_session(
                deps.runtime(), caller(ctx), resolved.scope, principal(ctx).owner
            )
            found = await session_observations(
                deps.runtime().readers,
                resolved.scope,
                session_id,
                exclude_session=who.session_id,
                before_id=before_id,
                limit=limit,
                max_body_chars=max_body_chars,
                who=principal(ctx),
            )
            return {**found, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_read_session_observations
