"""The /mcp endpoint, built in the background once the server answers.

Importing the MCP SDK and registering every tool takes about as long as the rest
of start-up, and nothing else needs it: the server answers /healthz and the API
first, and a request that reaches /mcp before the endpoint is built waits for it.
If it cannot be built, /mcp answers 503 naming why, and the rest keeps serving.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import anyio.to_thread
from starlette.routing import Route

if TYPE_CHECKING:
    from ai_memory.mcp.server import MemoryServer
    from ai_memory.runtime import Runtime

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

log = logging.getLogger(__name__)
MCP_PATH = "/mcp"


class Turn(Protocol):
    """When the build may begin (``ai_memory.web.later.LaterStart``)."""

    async def wait(self, wanted: Callable[[], bool]) -> None: ...


class LazyMcp:
    """ASGI app for /mcp; :meth:`running` (inside the app's lifespan) builds and serves it."""

    def __init__(self, get_runtime: Callable[[], Runtime | None], turn: Turn | None = None) -> None:
        self._get_runtime = get_runtime
        self._turn = turn  # None: the build begins with :meth:`running`
        self._wanted = False
        self._ready: anyio.Event | None = None  # made inside the event loop
        self._server: MemoryServer | None = None
        self._endpoint: ASGIApp | None = None
        self._error = "the MCP endpoint is not running"

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Start building now; serve until the lifespan ends."""
        self._ready = anyio.Event()
        async with anyio.create_task_group() as group:
            group.start_soon(self._serve)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    def route(self) -> Route:
        return Route(MCP_PATH, endpoint=self)

    async def server(self) -> MemoryServer | None:
        """The built server (None if it could not be built), once it is."""
        self._wanted = True  # its build begins now if it has not yet
        if self._ready is not None:
            await self._ready.wait()
        return self._server

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        await self.server()
        if self._endpoint is None:
            await _unavailable(send, self._error)
            return
        await self._endpoint(scope, receive, send)

    async def _serve(self) -> None:
        assert self._ready is not None
        try:
            if self._turn is not None:
                await self._turn.wait(lambda: self._wanted)
            server = await anyio.to_thread.run_sync(self._build)
        except Exception as exc:
            log.exception("the MCP endpoint could not be built")
            self._error = f"the MCP endpoint could not be built ({type(exc).__name__}: {exc})"
            self._ready.set()
            return
        from ai_memory.mcp.server import endpoint_of

        endpoint = endpoint_of(server)
        async with server.session_manager.run():
            self._server, self._endpoint = server, endpoint
            self._ready.set()
            await anyio.sleep_forever()

    def _build(self) -> MemoryServer:
        """Off the event loop: the import and the tools' schemas are the slow part."""
        from ai_memory.mcp.server import build_server

        return build_server(self._get_runtime)


async def _unavailable(send: Send, error: str) -> None:
    body = json.dumps({"error": "unavailable", "message": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
