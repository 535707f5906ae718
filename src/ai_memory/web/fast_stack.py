"""The middleware stack's checks in one call, for the routes answered ahead of it.

A hook event or a page write used to pass six middlewares in turn, each a
coroutine awaiting the next, two of them wrapping ``receive`` or ``send`` in a
closure of their own: per request, that framework work cost more than the
request's own parsing. The layers outside the stack (``hook_fast``,
``page_fast``) find the stack once and run the very same checks on the very same
objects, in the same order: the Host/Origin rule, the bearer token or API key
(looked up on every request, so a revoked key is refused at once), the in-flight
cap, the body cap. If the stack is not exactly the expected one, they leave every
request to it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ai_memory.core.principal import PRINCIPAL_KEY
from ai_memory.metrics.asgi import MetricsMiddleware
from ai_memory.store.acting import act_as, restore
from ai_memory.web.hook_asgi import HookRoutes
from ai_memory.web.middleware import (
    BearerAuth,
    BodyLimit,
    HostCheck,
    InFlightLimit,
    Receive,
    Scope,
    Send,
    send_json,
)


@dataclass(frozen=True, slots=True)
class Stack:
    """The middlewares a hook or page request passes, innermost last, as the app
    assembled them."""

    host: HostCheck
    auth: BearerAuth
    in_flight: InFlightLimit
    body: BodyLimit
    metrics: MetricsMiddleware
    routes: HookRoutes


def stack_of(app: Any) -> Stack | None:
    """The six middlewares from ``app`` inward, when they are the expected ones, in that
    order and nothing between them; None otherwise."""
    expected = (HostCheck, BearerAuth, InFlightLimit, BodyLimit, MetricsMiddleware, HookRoutes)
    layers: list[Any] = []
    for kind in expected:
        if type(app) is not kind:
            return None
        layers.append(app)
        app = getattr(app, "app", None)
    return Stack(*layers)


async def run_admitted(
    stack: Stack,
    scope: Scope,
    receive: Receive,
    send: Send,
    handle: Callable[[bytes], Awaitable[None]],
) -> None:
    """Run the stack's checks, then ``handle`` the body with the request's principal
    acting and its in-flight slot held; a check that refuses has answered already."""
    refusal = stack.host.refusal(scope)
    if refusal is not None:
        await send_json(send, *refusal, [])
        return
    who = await stack.auth.admit(scope, send)
    if who is None:
        return  # answered already
    scope[PRINCIPAL_KEY] = who
    token = act_as(who)
    limit = stack.in_flight
    try:
        if limit.active >= limit.limit:
            await limit.refuse(send)
            return
        limit.active += 1
        try:
            raw = await stack.body.read(scope, receive, send)
            if raw is not None:  # None: refused as too large, or the client left mid-body
                await handle(raw)
        finally:
            limit.active -= 1
    finally:
        restore(token)
