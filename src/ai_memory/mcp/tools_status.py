"""Overview tools: status, briefing, and the self-routing snippet."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from ai_memory import __version__
from ai_memory.core.fence import NOTE
from ai_memory.hooks.handoffs import Viewer
from ai_memory.mcp.annotations import READ
from ai_memory.mcp.args import Project, Workspace
from ai_memory.mcp.briefing import read_briefing
from ai_memory.mcp.deps import Ctx, ToolDeps, answer, principal
from ai_memory.mcp.instructions import SNIPPET_FILES, self_routing_snippet
from ai_memory.store.visible_counts import visible_counts


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    server.add_tool(
        _status_tool(deps),
        name="memory_status",
        title="Memory status",
        description="Counts of what memory holds (overall and for the project), the data "
        "version, and which project answered and why. Use to check the connection and scope.",
        annotations=READ,
        structured_output=False,
    )
    server.add_tool(
        _briefing_tool(deps),
        name="memory_briefing",
        title="Project briefing",
        description="A structured overview of the project: counts, rules, slots, pinned pages, "
        "recent pages and sessions, open handoffs. Use at the start of a task.",
        annotations=READ,
        structured_output=False,
    )
    server.add_tool(
        _routing_tool(),
        name="memory_install_self_routing",
        title="Self-routing snippet",
        description="Return the short snippet that tells an agent when to use these memory "
        "tools, to paste into CLAUDE.md, AGENTS.md or GEMINI.md.",
        annotations=READ,
        structured_output=False,
    )


def _status_tool(deps: ToolDeps) -> Any:
    async def memory_status(
        ctx: Ctx, workspace: Workspace = None, project: Project = None
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project)
            runtime = deps.runtime()
            hidden = await deps.hidden(ctx)
            who = principal(ctx)  # a user counts their own sessions and handoffs
            data = await runtime.readers.aread(
                lambda conn: visible_counts(conn, resolved.scope, hidden, who)
            )
            return {"version": __version__, **data, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_status


def _briefing_tool(deps: ToolDeps) -> Any:
    async def memory_briefing(
        ctx: Ctx,
        limit: Annotated[int, Field(ge=1, le=50, description="Items per list")] = 10,
        workspace: Workspace = None,
        project: Project = None,
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            resolved = await deps.scope(ctx, workspace, project)
            who = principal(ctx)
            data = await read_briefing(deps.runtime(), resolved.scope, limit, Viewer.of(who), who)
            return {**data, "note": NOTE, "scope": resolved.to_dict()}

        return await answer(work)

    return memory_briefing


def _routing_tool() -> Any:
    async def memory_install_self_routing(
        target: Annotated[
            Literal["claude", "agents", "gemini"],
            Field(description="claude: CLAUDE.md, agents: AGENTS.md, gemini: GEMINI.md"),
        ] = "agents",
    ) -> CallToolResult:
        async def work() -> dict[str, Any]:
            return {"file": SNIPPET_FILES[target], "snippet": self_routing_snippet()}

        return await answer(work)

    return memory_install_self_routing
