"""``POST /hook`` and ``POST /hook/batch`` answered before FastAPI's router.

Hook events are the busiest writes by far, and most of a small event's time went
to per-request work in the framework (routing, dependency injection, the request
and response objects) rather than to storing it. This handler sits inside the
middleware stack (Host/Origin, auth, the in-flight and body caps and the metrics
still see every request) and answers those two routes itself: the same parsing,
the same answers and the same errors, mapped as :mod:`ai_memory.web.errors` maps
them. Every other request, and these paths with another method, goes on to FastAPI.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote_plus

from ai_memory.core.principal import principal_in
from ai_memory.hooks.event_parser import ItemResult
from ai_memory.hooks.service import HookService
from ai_memory.web.asgi_answer import answer, encode_error, failure, read_body
from ai_memory.web.lone_request import lone_request
from ai_memory.web.middleware import ASGIApp, Receive, Scope, Send

ACCEPTED = b'{"status":"accepted","duplicate":false}'
DUPLICATE = b'{"status":"accepted","duplicate":true}'


class HookRoutes:
    """Answers the two hook ingest routes; ``hooks`` finds the running service (or None
    before the server started, when the request goes on to the app unchanged)."""

    def __init__(self, app: ASGIApp, hooks: Callable[[], HookService | None]) -> None:
        self.app = app
        self.hooks = hooks

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope["path"] if scope["type"] == "http" else ""
        service = self.hooks() if path in ("/hook", "/hook/batch") else None
        if service is None or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        try:
            raw = await read_body(receive)
        except Exception as exc:
            status, body = failure(exc, f"POST {path}")
        else:
            if raw is None:
                return  # the client left mid-body; nothing to answer
            status, body = await self.respond(service, path, scope, raw)
        await answer(send, status, body)

    async def respond(
        self, service: HookService, path: str, scope: Scope, raw: bytes
    ) -> tuple[int, bytes]:
        """The status and body ``POST path`` with body ``raw`` is answered with."""
        try:
            if path == "/hook":
                return await _one(service, scope, raw)
            return await _batch(service, scope, raw)
        except Exception as exc:
            return failure(exc, f"POST {path}")


async def _one(service: HookService, scope: Scope, raw: bytes) -> tuple[int, bytes]:
    """One agent event, body unchanged; 202 once it is durable, 429 when saturated."""
    params = query_params(scope.get("query_string", b""))
    outcome = await service.ingest(
        params, raw, principal_in(scope), lone_request=lone_request(scope)
    )
    return 202, ACCEPTED if outcome.stored else DUPLICATE


async def _batch(service: HookService, scope: Scope, raw: bytes) -> tuple[int, bytes]:
    """Up to 256 ``{"params", "body"}`` items, answered one by one, in order."""
    results = await service.ingest_batch(raw, principal_in(scope))
    return 200, batch_answer(results)


def batch_answer(results: list[ItemResult]) -> bytes:
    """``{"results": [...]}`` encoded as :func:`encode_error` encodes it; an item without an error
    (most are) written directly, not walked for text to escape: it holds two numbers."""
    items = [
        f'{{"index":{r.index},"status":{r.status}}}'.encode()
        if r.error is None
        else encode_error(r.to_dict())
        for r in results
    ]
    return b'{"results":[' + b",".join(items) + b"]}"


def query_params(raw: bytes) -> dict[str, str]:
    """The query string as ``dict(parse_qsl(query, keep_blank_values=True))`` reads it (the
    last repeated name wins), with only the pieces that hold an escape unquoted: a hook's
    parameters rarely do, and ``parse_qsl`` unquotes every one."""
    params: dict[str, str] = {}
    if not raw:
        return params
    for piece in raw.decode("latin-1").split("&"):
        if not piece:
            continue
        name, _, value = piece.partition("=")
        if "%" in piece or "+" in piece:
            name, value = unquote_plus(name), unquote_plus(value)
        params[name] = value
    return params
