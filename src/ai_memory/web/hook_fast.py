"""``POST /hook`` and ``POST /hook/batch`` through the middleware stack's checks in one
call (``fast_stack``), with the metrics counted as the metrics middleware counts them.
"""

from __future__ import annotations

import time

from ai_memory.hooks.service import HookService
from ai_memory.metrics.asgi import DELIVERY_PATHS
from ai_memory.web.asgi_answer import answer
from ai_memory.web.fast_stack import Stack, run_admitted, stack_of
from ai_memory.web.middleware import ASGIApp, Receive, Scope, Send

HOOK_PATHS = frozenset({"/hook", "/hook/batch"})


class HookFast:
    """Answers the hook routes with the checks of the stack inside it, folded into one call."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self._stack: Stack | None = None
        self._looked = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] in HOOK_PATHS and scope["method"] == "POST":
            stack = self._found()
            service = stack.routes.hooks() if stack is not None else None
            if stack is not None and service is not None:
                await self._hook(stack, service, scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _found(self) -> Stack | None:
        """The stack inside, found once; None unless it is exactly the expected one."""
        if not self._looked:
            self._looked = True
            self._stack = stack_of(self.app)
        return self._stack

    async def _hook(
        self, stack: Stack, service: HookService, scope: Scope, receive: Receive, send: Send
    ) -> None:
        async def respond(raw: bytes) -> None:
            path = scope["path"]
            route = DELIVERY_PATHS[path]
            started = time.perf_counter()
            status, body = 500, b""
            try:
                status, body = await stack.routes.respond(service, path, scope, raw)
                await answer(send, status, body)
            finally:
                duplicate = route == "hook" and b'"duplicate":true' in body
                elapsed = time.perf_counter() - started
                stack.metrics.record(route, None, status, duplicate, elapsed, body)

        await run_admitted(stack, scope, receive, send, respond)
