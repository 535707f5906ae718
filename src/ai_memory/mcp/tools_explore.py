"""memory_explore: the project briefing as a prose digest by the LLM provider."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field

from ai_memory.consolidate.edge import Slots
from ai_memory.core.fence import NOTE
from ai_memory.hooks.handoffs import Viewer
from ai_memory.mcp.args import Project, Workspace
from ai_memory.mcp.briefing import read_briefing
from ai_memory.mcp.deps import Ctx, ToolDeps, answer, principal

# A read, but the briefing goes to the configured provider: the one read that leaves the machine.
ANNOTATIONS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=True
)


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _explore_tool(deps, Slots()),
        name="memory_explore",
        title="Explore the project",
        description="A short prose digest of the project (rules, recent work, open threads, "
        "pages to read first) written by the configured LLM provider from memory_briefing. "
        "Without a provider, or if it fails, returns the structured briefing instead "
        "(source: briefing, with the reason).",
        annotations=ANNOTATIONS,
        structured_output=False,
    )


def _explore_tool(deps: ToolDeps, slots: Slots) -> Any:
    async def memory_explore(
        ctx: Ctx,
        limit: Annotated[int, Field(ge=1, le=50, description="Items per briefing list")] = 10,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project)
            runtime = deps.runtime()
            who = principal(ctx)
            data = await read_briefing(runtime, resolved.scope, limit, Viewer.of(who), who)
            from ai_memory.consolidate.explore import explore  # the LLM edge

            label = str(resolved.scope)
            found = await explore(runtime.llm, data, label, runtime.config.answers, slots)
            return {**found, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_explore
