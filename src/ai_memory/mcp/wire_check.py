"""Tool arguments the SDK could not even parse, answered as -32602 naming the argument.

The SDK's JSON parser refuses a message that spells a lone surrogate (``"\\ud800"``)
with a bare parse error (-32700) that names nothing. This wrapper of the /mcp
endpoint looks first: a ``tools/call`` whose arguments hold such text, or a NUL,
gets the same -32602 answer as any other argument that cannot be stored.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread
from mcp_types import INVALID_PARAMS

from ai_memory.core.validate import json_problem

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[MutableMapping[str, Any], Receive, Send], Awaitable[None]]


class RefuseUnstorableArguments:
    """ASGI wrapper: reads the (size-capped) body, answers a refusal or replays it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        body, disconnected = await _read_body(receive)
        # Only an escape can spell a lone surrogate or a NUL in JSON text: skip the rest.
        refusal = await anyio.to_thread.run_sync(refusal_for, body) if b"\\u" in body else None
        if refusal is not None and not disconnected:
            await _send_json(send, refusal)
            return
        await self.app(scope, _replay(body, receive), send)


def refusal_for(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC error for a ``tools/call`` with unstorable arguments, or None."""
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):
        return None  # the SDK answers what does not parse
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    if "id" not in message or not isinstance(arguments, dict):
        return None
    for name, value in arguments.items():
        found = json_problem(value, str(name))
        if found:
            where, problem = found
            return {
                "jsonrpc": "2.0",
                "id": message["id"],
                "error": {
                    "code": INVALID_PARAMS,
                    "message": f"invalid argument {where!r}: {problem}",
                    "data": {"error": "invalid_input", "argument": repr(name)[1:-1]},
                },
            }
    return None


async def _read_body(receive: Receive) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks), True
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks), False


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replayed


async def _send_json(send: Send, payload: dict[str, Any]) -> None:
    data = json.dumps(payload, ensure_ascii=True).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": data})
