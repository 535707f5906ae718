"""Counting requests as they pass: status codes and wall time, never their content.

Sits innermost (after the body cap), so the body it sees is bounded and already
read; for ``/mcp`` it looks at the first few KB only for the tool name, which it
maps to read/write through the tools' own annotations. No lock, no await held
across a shared structure: counters are bumped on the event loop.
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from typing import Any

from ai_memory.metrics.registry import Metrics, admission_of, outcome_of
from ai_memory.web.middleware import ASGIApp, Message, Receive, Scope, Send

ToolAccess = Callable[[], Awaitable[dict[str, str]]]
_TOOL_NAME = re.compile(rb'"name"\s*:\s*"([A-Za-z0-9_]{1,64})"')
PEEK_BYTES = 4096
DELIVERY_PATHS = {"/hook": "hook", "/hook/batch": "hook_batch", "/handoff": "handoff"}
QUERY_PATHS = {"/api/v1/search": "api", "/web/search": "web"}


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics, tool_access: ToolAccess) -> None:
        self.app = app
        self.metrics = metrics
        self.tool_access = tool_access
        self._access: dict[str, str] | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        route = DELIVERY_PATHS.get(path)
        surface = QUERY_PATHS.get(path)
        if path.startswith("/mcp") and scope.get("method") == "POST":
            receive, surface = await self._peek_tool(receive)
        if route is None and surface is None:
            await self.app(scope, receive, send)
            return
        status = 500
        duplicate = False
        answer = b""

        async def watch(message: Message) -> None:
            nonlocal status, duplicate, answer
            if message["type"] == "http.response.start":
                status = int(message["status"])
            elif message["type"] == "http.response.body" and route == "hook":
                duplicate = duplicate or b'"duplicate":true' in message.get("body", b"")
            elif message["type"] == "http.response.body" and route == "hook_batch":
                answer += message.get("body", b"")
            await send(message)

        started = time.perf_counter()
        try:
            await self.app(scope, receive, watch)
        finally:
            elapsed = time.perf_counter() - started
            self.record(route, surface, status, duplicate, elapsed, answer)

    def record(
        self,
        route: str | None,
        surface: str | None,
        status: int,
        duplicate: bool,
        elapsed: float,
        answer: bytes = b"",
    ) -> None:
        """Count one answered request of a delivery ``route`` or a query ``surface``;
        ``answer``: a ``/hook/batch`` answer's body, whose items count one by one."""
        if route is not None:
            self.metrics.delivered(route, outcome_of(status))
        if route == "hook":
            self.metrics.hook_answered(admission_of(status, duplicate), elapsed)
        elif route == "hook_batch" and status == 200:
            self.metrics.batch_answered(answer)
        if surface is not None:
            self.metrics.query_seconds.labels(surface).observe(elapsed)

    async def _peek_tool(self, receive: Receive) -> tuple[Receive, str | None]:
        """Count a ``tools/call`` by its tool's access; a query also gets timed."""
        first = await receive()
        head: bytes = first.get("body", b"")[:PEEK_BYTES]
        surface = None
        if b'"tools/call"' in head and (match := _TOOL_NAME.search(head)):
            name = match.group(1).decode()
            access = (await self._tool_map()).get(name, "unknown")
            self.metrics.tool_calls.labels(access).inc()
            surface = "mcp" if name == "memory_query" else None
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return first
            return await receive()

        return replay, surface

    async def _tool_map(self) -> dict[str, str]:
        if self._access is None:
            self._access = await self.tool_access()
        return self._access


def tool_access_of(server: Callable[[], Awaitable[Any]]) -> ToolAccess:
    """Read/write per tool from the MCP server's own annotations, looked up once.

    ``server`` waits for the (lazily built) MCP server; None when it could not be built.
    """

    async def lookup() -> dict[str, str]:
        built = await server()
        tools = await built.list_tools() if built is not None else []
        result: dict[str, str] = {}
        for tool in tools:
            hints = getattr(tool, "annotations", None)
            read_only = bool(getattr(hints, "read_only_hint", False)) if hints else False
            result[tool.name] = "read" if read_only else "write"
        return result

    return lookup
