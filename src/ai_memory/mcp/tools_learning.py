"""``memory_auto_improve``: run the learning loop's reviewer on one session now."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from ai_memory.consolidate.learning_schedule import improve_now
from ai_memory.mcp.args import Project, Workspace
from ai_memory.mcp.deps import Ctx, ToolDeps, answer, principal

# It writes only proposals (a person approves them), and it sends a session to the provider.
ANNOTATIONS = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=True
)


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _improve_tool(deps),
        name="memory_auto_improve",
        title="Propose rule and procedure edits",
        description="Review one completed session of the project with the configured LLM and "
        "propose edits to its _rules/ and procedures/ pages. Each proposal waits in the "
        "pending-writes queue for a person to approve (applied at once when [learning] "
        "require_approval = false). dry_run=true returns the proposals without storing them. "
        "Needs an LLM provider ([llm]); without one the answer is llm_unavailable.",
        annotations=ANNOTATIONS,
        structured_output=False,
    )


def _improve_tool(deps: ToolDeps) -> Any:
    async def memory_auto_improve(
        ctx: Ctx,
        session_id: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                description="Default: your latest completed session in the project",
            ),
        ] = None,
        dry_run: Annotated[bool, Field(description="Only show what would be proposed")] = False,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project, write=not dry_run)
            await deps.own_session(ctx, resolved.scope, session_id)
            runtime = deps.runtime()
            report = await improve_now(
                runtime.wiki,
                runtime.llm,
                runtime.config.learning,
                resolved.scope,
                session_id,
                dry_run,
                principal(ctx),
            )
            return {**report.to_dict(), "scope": resolved.to_dict()}

        return await answer(work)

    return memory_auto_improve
