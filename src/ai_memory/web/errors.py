"""The one place domain errors become HTTP answers: ``{"error": code, "message": …}``.

Every answer here renders even when the request carried text that cannot be
encoded (a lone surrogate echoed in a message), and an unexpected exception is
answered inside the app as a 500, so the connection stays usable.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from ai_memory.core.errors import AiMemoryError
from ai_memory.core.validate import printable

log = logging.getLogger(__name__)

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]

_HTTP_CODES = {
    400: "invalid_request",
    404: "not_found",
    405: "method_not_allowed",
    401: "unauthorized",
}


class ErrorJSON(JSONResponse):
    """JSON that always encodes: text that is not valid Unicode is shown escaped."""

    def render(self, content: Any) -> bytes:
        return json.dumps(
            _printable(content), ensure_ascii=False, separators=(",", ":"), default=str
        ).encode("utf-8")


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(AiMemoryError)
    async def domain_error(request: Request, exc: AiMemoryError) -> JSONResponse:
        return ErrorJSON(exc.to_dict(), status_code=exc.http_status)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [_problem(error) for error in exc.errors()]
        return ErrorJSON(
            {"error": "invalid_request", "message": "; ".join(problems)[:2000]}, status_code=422
        )

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        message = str(exc.detail)
        if exc.status_code == 400 and "parsing the body" in message:
            message = "the request body is not valid JSON in UTF-8"
        return ErrorJSON(
            {"error": code, "message": message},
            status_code=exc.status_code,
            headers=exc.headers,
        )

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return _internal(exc)

    app.add_middleware(AnswerUnexpected)


class AnswerUnexpected:
    """Answer an unexpected exception with a 500 here, inside the app.

    Starlette's outermost handler re-raises after answering, which makes the
    server drop the keep-alive connection; a bug must cost one answer, not the
    client's connection.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracked)
        except Exception as exc:
            if started:
                raise
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            await _internal(exc)(scope, receive, send)


def _internal(exc: Exception) -> JSONResponse:
    return ErrorJSON(
        {"error": "internal", "message": f"internal error: {type(exc).__name__}"},
        status_code=500,
    )


def _problem(error: Any) -> str:
    """``field.sub: what is wrong``: the field as the caller spelled it, without the
    schema's own labels (``body``, union branch names) in the way."""
    parts = [str(part) for part in error.get("loc", ())]
    if parts and parts[0] == "body":
        parts = parts[1:]
    where = ".".join(part for part in parts if not _is_schema_label(part))
    message = str(error.get("msg", "invalid"))
    message = message.removeprefix("Value error, ")
    return f"{where or 'body'}: {message}"


def _is_schema_label(part: str) -> bool:
    return (part.endswith("]") and "[" in part) or part.startswith("function-")


def _printable(value: Any) -> Any:
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_printable(v) for v in value]
    return value
