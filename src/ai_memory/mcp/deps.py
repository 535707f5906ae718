"""What every tool needs: the running parts, who is calling, and the one error boundary."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from ai_memory.core.errors import AiMemoryError, Unavailable
from ai_memory.mcp.errors import domain_error, ok
from ai_memory.mcp.scope import Caller, ResolvedScope, resolve_scope
from ai_memory.runtime import Runtime

Ctx = Context[Any, Any]


@dataclass(frozen=True, slots=True)
class ToolDeps:
    """Handed to every tool group; the runtime exists only once the app has started."""

    get_runtime: Callable[[], Runtime | None]

    def runtime(self) -> Runtime:
        runtime = self.get_runtime()
        if runtime is None:
            raise Unavailable("the server is still starting; retry in a moment")
        return runtime

    async def scope(
        self,
        ctx: Ctx,
        workspace: str | None,
        project: str | None,
        *,
        write: bool = False,
        global_scope: bool = False,
    ) -> ResolvedScope:
        return await resolve_scope(
            self.runtime(),
            caller(ctx),
            workspace,
            project,
            write=write,
            global_scope=global_scope,
        )


def caller(ctx: Ctx) -> Caller:
    try:
        headers = ctx.headers
    except ValueError:  # outside a request (in-process calls)
        headers = None
    return Caller.from_headers(headers)


async def answer(work: Callable[[], Awaitable[dict[str, Any]]]) -> CallToolResult:
    """Run a tool body; domain errors become results or -32602 errors (see errors.py)."""
    try:
        return ok(await work())
    except AiMemoryError as exc:
        mapped = domain_error(exc)
        if isinstance(mapped, MCPError):
            raise mapped from exc
        return mapped
