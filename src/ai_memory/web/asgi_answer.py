"""What the routes answered before FastAPI's router share: the body read, the JSON
answer, and an error turned into the answer the app's own handlers would give."""

from __future__ import annotations

import logging

from ai_memory.core.errors import AiMemoryError
from ai_memory.web.errors import ErrorJSON
from ai_memory.web.middleware import Receive, Send

log = logging.getLogger(__name__)

_JSON = (b"content-type", b"application/json")


async def read_body(receive: Receive) -> bytes | None:
    """The whole request body (the body cap outside has bounded it already); None when
    the client left before its end."""
    message = await receive()
    if message["type"] != "http.request":
        return None
    chunk: bytes = message.get("body", b"")
    if not message.get("more_body", False):
        return chunk
    chunks = [chunk]
    while message.get("more_body", False):
        message = await receive()
        if message["type"] != "http.request":
            return None
        chunks.append(message.get("body", b""))
    return b"".join(chunks)


async def answer(send: Send, status: int, body: bytes) -> None:
    """A whole JSON answer."""
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-length", b"%d" % len(body)), _JSON],
        }
    )
    await send({"type": "http.response.body", "body": body})


def failure(exc: Exception, request: str) -> tuple[int, bytes]:
    """The status and body the app's error handlers answer ``exc`` with; an unexpected
    one is logged with the ``request`` it failed (``"POST /hook"``)."""
    if isinstance(exc, AiMemoryError):
        return exc.http_status, encode_error(exc.to_dict())
    log.error("unhandled error on %s", request, exc_info=exc)
    message = f"internal error: {type(exc).__name__}"
    return 500, encode_error({"error": "internal", "message": message})


def encode_error(content: object) -> bytes:
    """JSON as the app's error answers encode it (always encodable)."""
    body = ErrorJSON(content).body
    return body if isinstance(body, bytes) else bytes(body)
