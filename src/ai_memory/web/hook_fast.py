"""``POST /hook`` and ``POST /hook/batch`` through the middleware stack's checks in one call.

A single event's request went through six middlewares in turn, each a coroutine
awaiting the next, two of them wrapping ``receive`` or ``send`` in a closure of
their own: per event, that framework work cost more than parsing the event. This
layer sits just outside them and, for the two hook routes, runs the very same
checks on the very same objects, in the same order: the Host/Origin rule, the
bearer token or API key (looked up on every request, so a revoked key is refused
at once), the in-flight cap, the body cap, the metrics counters; then the hook
route answers. Every other request goes through the stack unchanged, and so does
every request if the stack is not the one this layer expects.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ai_memory.core.principal import PRINCIPAL_KEY
from ai_memory.hooks.service import HookService
from ai_memory.metrics.asgi import DELIVERY_PATHS, MetricsMiddleware
from ai_memory.store.acting import act_as, restore
from ai_memory.web.asgi_answer import answer
from ai_memory.web.hook_asgi import HookRoutes
from ai_memory.web.middleware import (
    ASGIApp,
    BearerAuth,
    BodyLimit,
    HostCheck,
    InFlightLimit,
    Receive,
    Scope,
    Send,
    send_json,
)

HOOK_PATHS = frozenset({"/hook", "/hook/batch"})


@dataclass(frozen=True, slots=True)
class _Stack:
    """The middlewares a hook request passes, innermost last, as the app assembled them."""

    host: HostCheck
    auth: BearerAuth
    in_flight: InFlightLimit
    body: BodyLimit
    metrics: MetricsMiddleware
    routes: HookRoutes


class HookFast:
    """Answers the hook routes with the checks of the stack inside it, folded into one call."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._stack: _Stack | None = None
        self._looked = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in HOOK_PATHS and scope["method"] == "POST":
            stack = self._found()
            service = stack.routes.hooks() if stack is not None else None
            if stack is not None and service is not None:
                await self._hook(stack, service, scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _found(self) -> _Stack | None:
        """The stack inside, found once; None unless it is exactly the expected one."""
        if not self._looked:
            self._looked = True
            self._stack = stack_of(self.app)
        return self._stack

    async def _hook(
        self, stack: _Stack, service: HookService, scope: Scope, receive: Receive, send: Send
    ) -> None:
        refusal = stack.host.refusal(scope)
        if refusal is not None:
            await send_json(send, *refusal, [])
            return
        who = await stack.auth.admit(scope, send)
        if who is None:
            return  # answered already
        scope[PRINCIPAL_KEY] = who
        token = act_as(who)
        try:
            await self._admitted(stack, service, scope, receive, send)
        finally:
            restore(token)

    async def _admitted(
        self,
        stack: _Stack,
        service: HookService,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        limit = stack.in_flight
        if limit.active >= limit.limit:
            await limit.refuse(send)
            return
        limit.active += 1
        try:
            raw = await stack.body.read(scope, receive, send)
            if raw is None:
                return  # refused as too large, or the client left mid-body
            path = scope["path"]
            route = DELIVERY_PATHS[path]
            started = time.perf_counter()
            status, body = 500, b""
            try:
                status, body = await stack.routes.respond(service, path, scope, raw)
                await answer(send, status, body)
            finally:
                duplicate = route == "hook" and b'"duplicate":true' in body
                stack.metrics.record(route, None, status, duplicate, time.perf_counter() - started)
        finally:
            limit.active -= 1


def stack_of(app: Any) -> _Stack | None:
    """The six middlewares from ``app`` inward, when they are the ones a hook request
    passes, in that order and nothing between them; None otherwise."""
    expected = (HostCheck, BearerAuth, InFlightLimit, BodyLimit, MetricsMiddleware, HookRoutes)
    layers: list[Any] = []
    for kind in expected:
        if type(app) is not kind:
            return None
        layers.append(app)
        app = getattr(app, "app", None)
    return _Stack(*layers)
