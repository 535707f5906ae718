"""What every tool needs: the running parts, who is calling, and the one error boundary."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from ai_memory.core.errors import AiMemoryError, Forbidden, Unavailable
from ai_memory.core.fence import neutralise, neutralise_tree
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, Principal, principal_in
from ai_memory.hooks.ingest_access import owns_session
from ai_memory.mcp.errors import domain_error, dumps, ok
from ai_memory.mcp.scope import Caller, ResolvedScope, resolve_scope
from ai_memory.runtime import Runtime
from ai_memory.store import acting, project_access

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
        need: Access | None = None,
    ) -> ResolvedScope:
        """The project a call answers from, once the caller may use it as ``need`` says
        (default: WRITE for a write, else READ); refused before any of its rows is read."""
        runtime = self.runtime()
        resolved = await resolve_scope(
            runtime, caller(ctx), workspace, project, write=write, global_scope=global_scope
        )
        wanted = need if need is not None else (Access.WRITE if write else Access.READ)
        await authorize(runtime, principal(ctx), resolved.scope, wanted)
        return resolved

    async def own_session(self, ctx: Ctx, scope: Scope, session_id: str | None) -> None:
        """403 unless the caller may read ``session_id``'s raw observations (their own
        session; admins: any), for tools that hand them on (to a page or a provider)."""
        who = principal(ctx)
        if session_id is None or who.sees_every_owner():
            return
        mine = await self.runtime().readers.aread(
            lambda conn: owns_session(conn, who, scope, session_id)
        )
        if not mine:
            raise Forbidden(
                f"user {who.name!r} may not use session {session_id} in {scope}: "
                "another user captured it"
            )

    async def hidden(self, ctx: Ctx) -> frozenset[Scope]:
        """The projects the caller may not read, for tools that list several projects."""
        return await hidden_projects(self.runtime(), principal(ctx))


async def authorize(runtime: Runtime, who: Principal, scope: Scope, need: Access) -> None:
    """:func:`project_access.authorize`; an admin needs no read of the database."""
    if not who.admin:
        await runtime.readers.aread(lambda conn: project_access.authorize(conn, who, scope, need))


async def hidden_projects(runtime: Runtime, who: Principal) -> frozenset[Scope]:
    if who.admin:
        return frozenset()
    return await runtime.readers.aread(lambda conn: project_access.hidden_projects(conn, who))


def principal(ctx: Ctx | None) -> Principal:
    """Who makes the call: the principal the auth middleware left in the HTTP request's
    scope; the operator when there is no request (an in-process call)."""
    if ctx is None:
        return Principal.root()
    try:
        request = ctx.request_context.request
    except ValueError:
        return Principal.root()
    scope = getattr(request, "scope", None)
    return principal_in(scope) if isinstance(scope, dict) else Principal.root()


@contextmanager
def acting_for(ctx: Ctx | None) -> Iterator[Principal]:
    """Run a tool call as its caller: MCP tools run in the MCP session's task, not the
    HTTP request's, so the middleware's principal is set again here for audit rows, new
    projects' creators and search."""
    who = principal(ctx)
    token = acting.act_as(who)
    try:
        yield who
    finally:
        acting.restore(token)


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
