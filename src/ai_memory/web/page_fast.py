"""The page PUT through the middleware stack's checks in one call, as the hook routes are.

A page write's request went through the same six middlewares as a hook event
(Host/Origin, auth, in-flight cap, body cap, metrics, the hook routes), each a
coroutine awaiting the next, before :class:`~ai_memory.web.page_asgi.PageWriteRoute`
answered it. This layer sits just outside them (and outside the hook routes' own
fold) and, for a page PUT the route would answer, runs the very same checks on the
very same objects in the same order (the metrics count nothing for this path, the
hook routes pass it on), then hands the read body to the route. Every other
request goes through the stack unchanged, and so does every request if the stack
is not the one this layer expects.
"""

from __future__ import annotations

from ai_memory.runtime import Runtime
from ai_memory.web.fast_stack import Stack, run_admitted, stack_of
from ai_memory.web.hook_fast import HookFast
from ai_memory.web.middleware import ASGIApp, Receive, Scope, Send
from ai_memory.web.page_asgi import PageWriteRoute, json_content, page_route


class FoldedRoute:
    """A layer outside the stack that answers one route itself, with the stack's checks
    folded into one call; it finds the stack once, on its first request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._looked = False
        self._stack: Stack | None = None

    def _found(self) -> Stack | None:
        """The stack inside, found once (see :func:`stack_with_page_route`)."""
        if not self._looked:
            self._looked = True
            self._stack = stack_with_page_route(self.app)
        return self._stack

    def _ready(self) -> tuple[Stack, Runtime] | None:
        """The stack and the running runtime; None (the request then goes through the
        stack) when the stack is not the expected one or the server has not started."""
        stack = self._found()
        runtime = page_route_in(stack).runtime() if stack is not None else None
        return (stack, runtime) if stack is not None and runtime is not None else None


class PageFast(FoldedRoute):
    """Answers a page PUT with the checks of the stack inside it, folded into one call."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        match = page_route(scope) if scope["type"] == "http" else None
        ready = self._ready() if match is not None else None
        if match is not None and ready is not None and json_content(scope):
            await self._page(*ready, match, scope, receive, send)
            return
        await self.app(scope, receive, send)

    async def _page(
        self,
        stack: Stack,
        runtime: Runtime,
        match: tuple[str, str, str],
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        async def respond(raw: bytes) -> None:
            await page_route_in(stack).respond(runtime, match, scope, raw, receive, send)

        await run_admitted(stack, scope, receive, send, respond)


def stack_with_page_route(app: ASGIApp) -> Stack | None:
    """The stack inside ``app`` and the other folded layers; None unless it is exactly the
    expected one with the page route innermost (which also knows the runtime)."""
    while type(app) in (PageFast, HookFast):
        app = app.app  # type: ignore[attr-defined]
    stack = stack_of(app)
    inner = getattr(stack.routes, "app", None) if stack is not None else None
    return stack if type(inner) is PageWriteRoute else None


def page_route_in(stack: Stack) -> PageWriteRoute:
    """The page route just inside the hook routes (``stack_with_page_route`` checked it)."""
    route: PageWriteRoute = stack.routes.app  # type: ignore[assignment]
    return route
