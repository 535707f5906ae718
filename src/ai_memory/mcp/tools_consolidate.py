"""``memory_consolidate``: turn a finished session into durable, linked pages (needs a provider).

The consolidation package loads only when the tool is called with a provider
configured: without one, the answer is the ``llm_unavailable`` error (after the
caller's access to the project is checked: a refusal comes first) and nothing of
the session is read, queued or written.
"""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from ai_memory.mcp.args import Project, Workspace
from ai_memory.mcp.deps import Ctx, ToolDeps, answer, principal

# It writes pages (new versions; nothing is removed) and, unlike every other tool, it
# sends the session to the configured provider, which may be a hosted service.
ANNOTATIONS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _consolidate_tool(deps),
        name="memory_consolidate",
        title="Consolidate a session",
        description="Ask the configured LLM provider to turn a completed session into a "
        "richer session page plus new or updated concepts/, decisions/, gotchas/ and "
        "procedures/ pages, linked to each other and to the session (pinned pages are never "
        "rewritten). Without session_id: your latest completed session in the project. The same "
        "session is consolidated once; dry_run=true only says what would be written.",
        annotations=ANNOTATIONS,
        structured_output=False,
    )


def _consolidate_tool(deps: ToolDeps) -> Any:
    async def memory_consolidate(
        ctx: Ctx,
        session_id: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                description="Default: your latest completed session in the project",
            ),
        ] = None,
        multi_page: Annotated[
            bool | None,
            Field(
                description="Write durable pages too, not only the session page (default: "
                "[consolidation] multi_page)"
            ),
        ] = None,
        dry_run: Annotated[bool, Field(description="Only say what would be written")] = False,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=not dry_run)
            await deps.own_session(ctx, resolved.scope, session_id)
            runtime = deps.runtime()
            from ai_memory.consolidate.consolidation_gate import require_chat

            require_chat(runtime)
            from ai_memory.consolidate.consolidation_jobs import consolidate_now

            settings = runtime.config.consolidation
            result = await consolidate_now(
                runtime,
                settings,
                resolved.scope,
                session_id,
                multi_page=settings.multi_page if multi_page is None else multi_page,
                dry_run=dry_run,
                who=principal(ctx),
            )
            return {**result, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_consolidate
