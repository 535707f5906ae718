"""Routers built on a thread once the server answers; a request that comes first waits.

Importing a router module builds the pydantic models of all its routes' parameters
and answers. The web UI, the admin, hygiene, identity and message routes are not
what an agent's first requests need, so the server answers without them and builds
them beside its first answers. Until they are in, a request no other route takes
waits for them and is then routed as usual: a route that exists never answers 404
because it is not built yet, and a path that matches nothing still gets its 404.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import Receive, Scope, Send

log = logging.getLogger(__name__)


class LaterRoutes(BaseRoute):
    """Stands last among the app's routes, matching every request until :meth:`build`."""

    def __init__(self, app: FastAPI, routers: Callable[[], Sequence[APIRouter]]) -> None:
        self._app = app
        self._routers = routers
        self._ready: anyio.Event | None = None  # made inside the event loop
        self._error: str | None = None
        self._done = False

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if self._done or scope["type"] not in ("http", "websocket"):
            return Match.NONE, {}
        return Match.FULL, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self._ready is None:
            self._ready = anyio.Event()
        await self._ready.wait()
        if self._error is not None:
            await _unavailable(send, self._error)
            return
        await self._app.router(scope, receive, send)  # routed again, with every router in

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Build now, beside the first answers (inside the app's lifespan)."""
        async with anyio.create_task_group() as group:
            group.start_soon(self.build)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    async def build(self) -> None:
        """Build the routers off the event loop, then put them in, in their order."""
        if self._ready is None:
            self._ready = anyio.Event()
        try:
            routers = await anyio.to_thread.run_sync(self._routers)
            for router in routers:
                self._app.include_router(router)
            self._app.openapi_schema = None  # a schema made before then lacks them
        except Exception as exc:
            log.exception("routes could not be built")
            self._error = f"routes could not be built ({type(exc).__name__}: {exc})"
        self._done = self._error is None
        self._ready.set()


async def _unavailable(send: Send, error: str) -> None:
    body = json.dumps({"error": "unavailable", "message": error}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})
