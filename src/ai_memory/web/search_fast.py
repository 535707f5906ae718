"""``GET /api/v1/search`` through the middleware stack's checks in one call, ahead of the
router, as the hook routes and the page PUT are.

A search's own work is a millisecond or two; on its way there a request passed six
middlewares, each a coroutine awaiting the next, then FastAPI's router matched the path
against every route and built a request object and a dependency set for a handler
that reads the query string itself. This layer sits outside the stack and, for a
search the route would answer the same way, runs the very same checks on the very
same objects in the same order (Host/Origin, token or key, in-flight cap, body cap),
counts the query in the metrics as the metrics middleware does, and answers with the
route's own JSON. A search without ``q``, or with an LLM rerank configured, goes
through the stack to the route unchanged, and so does every request if the stack is
not the one this layer expects.
"""

from __future__ import annotations

import time

from starlette.datastructures import QueryParams

from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search as run_search
from ai_memory.runtime import Runtime
from ai_memory.web.asgi_answer import answer, failure
from ai_memory.web.fast_stack import Stack, run_admitted
from ai_memory.web.middleware import Receive, Scope, Send
from ai_memory.web.page_fast import FoldedRoute
from ai_memory.web.search import SEARCH_PATH, request_data

SURFACE = "api"  # the metrics' name for this route's queries (metrics.asgi.QUERY_PATHS)


class SearchFast(FoldedRoute):
    """Answers ``GET /api/v1/search`` with the checks of the stack inside it, in one call."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == SEARCH_PATH and scope["method"] == "GET":
            ready = self._ready()
            if ready is not None and not ready[1].config.answers.rerank:
                params = QueryParams(scope["query_string"])
                if "q" in params:  # without it the route answers FastAPI's own 422
                    await self._search(*ready, params, scope, receive, send)
                    return
        await self.app(scope, receive, send)

    async def _search(
        self,
        stack: Stack,
        runtime: Runtime,
        params: QueryParams,
        scope: Scope,
        receive: Receive,
        send: Send,
    ) -> None:
        async def respond(_body: bytes) -> None:
            started = time.perf_counter()
            status = 500
            try:
                try:
                    request = SearchRequest.parse(request_data(params))
                    status, body = 200, (await run_search(runtime.retrieval, request)).to_json()
                except Exception as exc:  # answered as the app's handlers answer it
                    status, body = failure(exc, "GET /api/v1/search")
                await answer(send, status, body)
            finally:
                stack.metrics.record(None, SURFACE, status, False, time.perf_counter() - started)

        await run_admitted(stack, scope, receive, send, respond)
