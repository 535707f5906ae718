"""Routers built on a thread once the server answers; a request that comes first waits.

Importing a router module builds the pydantic models of all its routes' parameters
and answers. The web UI, the admin, hygiene, identity and message routes are not
what an agent's first requests need, so the server answers without them and builds
them beside its first answers. Until they are in, a request no other route takes
waits for them and is then routed as usual: a route that exists never answers 404
because it is not built yet, and a path that matches nothing still gets its 404.

Building imports modules on a thread, which holds the interpreter's lock most of
the time: begun as the server answers, the builds slowed its first answers
(``/api/v1/status`` at 10,000 pages answered 0.12-0.35 s after the server did, not
0.03-0.06 s). :class:`LaterStart` holds them back while the first requests are
answered: the builds begin once no request has been in flight for a moment, as
soon as a request needs what one of them builds (the first answers are over then),
and at the latest a second after the server answers.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
from fastapi import APIRouter, FastAPI
from starlette.routing import BaseRoute, Match, NoMatchFound
from starlette.types import ASGIApp, Receive, Scope, Send

log = logging.getLogger(__name__)


class LaterStart:
    """When the builds of what the first answers do not need may begin: all at once.

    ``quiet_s``: how long no request must have been in flight; ``latest_s``: the
    longest a build waits from :meth:`wait` on (a steady stream of requests never
    leaves the server quiet). :meth:`track` counts the requests in flight.
    """

    def __init__(self, quiet_s: float = 0.05, latest_s: float = 1.0) -> None:
        self.quiet_s = quiet_s
        self.latest_s = latest_s
        self.in_flight = 0
        self.last_answered = time.monotonic()
        self.waiting = 0  # builds not begun: requests are counted while there are any
        self.begun = False

    async def wait(self, wanted: Callable[[], bool]) -> None:
        """Until the server is quiet, ``wanted()`` is true (for this build or another),
        or ``latest_s`` has passed."""
        self.waiting += 1
        self.last_answered = max(self.last_answered, time.monotonic())
        try:
            with anyio.move_on_after(self.latest_s):
                while not (self.begun or wanted() or self._quiet()):
                    await anyio.sleep(0.005)
        finally:
            self.begun = True
            self.waiting -= 1

    @asynccontextmanager
    async def after(self, work: Callable[[], None]) -> AsyncIterator[None]:
        """``work`` on a thread once the builds may begin: what nothing waits for."""

        async def run() -> None:
            await self.wait(lambda: False)
            await anyio.to_thread.run_sync(work)

        async with anyio.create_task_group() as group:
            group.start_soon(run)
            try:
                yield
            finally:
                group.cancel_scope.cancel()

    def _quiet(self) -> bool:
        return self.in_flight == 0 and time.monotonic() - self.last_answered >= self.quiet_s

    def track(self, app: ASGIApp) -> ASGIApp:
        """``app`` with its HTTP requests counted while a build waits."""

        async def counted(scope: Scope, receive: Receive, send: Send) -> None:
            if not self.waiting or scope["type"] != "http":
                await app(scope, receive, send)
                return
            self.in_flight += 1
            try:
                await app(scope, receive, send)
            finally:
                self.in_flight -= 1
                self.last_answered = time.monotonic()

        return counted


class LaterRoutes(BaseRoute):
    """Stands last among the app's routes, matching every request until :meth:`build`."""

    def __init__(
        self,
        app: FastAPI,
        routers: Callable[[], Sequence[APIRouter]],
        start: LaterStart | None = None,
    ) -> None:
        self._app = app
        self._routers = routers
        self._start = start
        self._ready: anyio.Event | None = None  # made inside the event loop
        self._error: str | None = None
        self._done = False
        self._wanted = False

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        if self._done or scope["type"] not in ("http", "websocket"):
            return Match.NONE, {}
        return Match.FULL, {}

    def url_path_for(self, name: str, /, **path_params: Any) -> Any:
        raise NoMatchFound(name, path_params)

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        self._wanted = True  # its build begins now if it has not yet
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
            if self._start is not None:
                await self._start.wait(lambda: self._wanted)
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
