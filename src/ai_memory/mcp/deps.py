"""What every tool needs: the running parts, who is calling, and the one error boundary."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from ai_memory.core.errors import AiMemoryError, Unavailable
from ai_memory.core.fence import neutralise, neutralise_tree
from ai_memory.mcp.errors import domain_error, dumps, ok
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
    """Run a tool body; domain errors become results or -32602 errors (see errors.py).

    Every answer, error details included, leaves here with its stored text unable to
    close or fake the untrusted-history fence: one place, so no tool can forget it. The
    pass grows with the answer (a page body is up to 64,000 characters), so it runs off
    the event loop.
    """
    try:
        data = await work()
        return ok(await anyio.to_thread.run_sync(neutralise_tree, data))
    except AiMemoryError as exc:
        mapped = domain_error(exc)
        if isinstance(mapped, MCPError):
            raise _neutral_error(mapped) from exc
        return _neutral_result(mapped)


def _neutral_result(result: CallToolResult) -> CallToolResult:
    payload = neutralise_tree(result.structured_content or {})
    return result.model_copy(
        update={
            "content": [TextContent(type="text", text=dumps(payload))],
            "structured_content": payload,
        }
    )


def _neutral_error(error: MCPError) -> MCPError:
    return MCPError(error.code, neutralise(error.message), neutralise_tree(error.data))
