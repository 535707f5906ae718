"""ASGI middleware: Host/Origin rule, bearer-token auth, request caps (size, in flight)."""

from __future__ import annotations

import hmac
import json
import re
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import quote

from ai_memory.core.principal import PRINCIPAL_KEY, Principal
from ai_memory.store.acting import act_as, restore
from ai_memory.web import webauth
from ai_memory.web.origin import HostRule

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def replay_body(raw: bytes, receive: Receive) -> Receive:
    """A receive that gives the app the body already read, then the connection's own."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": raw, "more_body": False}
        return await receive()

    return replay


ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]
KeyLookup = Callable[[str], Awaitable[Principal | None]]
CookieLookup = Callable[[bytes], Awaitable[Principal | None]]  # the Cookie header's user

PUBLIC_PATHS = frozenset({"/healthz"})
# The UI's sign-in page and its stylesheet hold no data; the login route checks the token.
WEB_OPEN = frozenset(
    {(webauth.LOGIN_PATH, m) for m in ("GET", "HEAD", "POST")}
    | {(webauth.STYLE_PATH, m) for m in ("GET", "HEAD")}
)


async def send_json(send: Send, status: int, payload: dict[str, Any], headers: list[Any]) -> None:
    body = json.dumps(payload).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def redirect_to_login(send: Send, scope: Scope) -> None:
    """A browser without the UI cookie goes to the sign-in page, then back where it was."""
    query = scope.get("query_string", b"").decode("latin-1")
    target = scope["path"] + ("?" + query if query else "")
    location = f"{webauth.LOGIN_PATH}?next={quote(target, safe='')}"
    await send(
        {
            "type": "http.response.start",
            "status": 303,
            "headers": [
                (b"location", location.encode()),
                (b"content-length", b"0"),
                (b"cache-control", b"no-store"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": b""})


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class BearerAuth:
    """Every route but the public ones needs ``Authorization: Bearer <root token or API key>``.

    The one exception: GET/HEAD under /web (and the pending-writes forms' POST)
    also accept the UI cookie that ``/web/login`` sets, and send a browser
    without it to the sign-in page. Whoever authenticates is left in the scope
    (``PRINCIPAL_KEY``) and set as the request's acting principal.
    """

    def __init__(
        self,
        app: ASGIApp,
        token: str,
        keys: KeyLookup,
        cookies: CookieLookup,
    ) -> None:
        if not token:
            raise ValueError("a bearer token is required")
        self.app = app
        self.expected = f"Bearer {token}".encode()
        self.keys = keys
        self.cookies = cookies

    async def _as(self, principal: Principal, scope: Scope, receive: Receive, send: Send) -> None:
        scope[PRINCIPAL_KEY] = principal
        token = act_as(principal)
        try:
            await self.app(scope, receive, send)
        finally:
            restore(token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path, method = scope["path"], scope.get("method", "")
        if path in PUBLIC_PATHS or (scope["type"] == "http" and (path, method) in WEB_OPEN):
            await self.app(scope, receive, send)
            return
        principal = await self.admit(scope, send)
        if principal is not None:
            await self._as(principal, scope, receive, send)

    async def admit(self, scope: Scope, send: Send) -> Principal | None:
        """Who the request authenticates as; None once it has been answered (400, 401, or
        a browser sent to the sign-in page). The key is looked up on every request."""
        path, method = scope["path"], scope.get("method", "")
        raw = scope.get("headers") or []
        headers = dict(raw)
        if len(headers) != len(raw) and sum(1 for name, _ in raw if name == b"authorization") > 1:
            await send_json(
                send,
                400,
                {
                    "error": "invalid_request",
                    "message": "more than one Authorization header; send exactly one",
                },
                [],
            )
            return None
        given = headers.get(b"authorization", b"")
        if hmac.compare_digest(given, self.expected):
            return Principal.root()
        user = await self._key_user(given)
        if user is not None:
            return user
        if scope["type"] == "http" and webauth.accepts_cookie(method, path):
            signed_in = await self.cookies(headers.get(b"cookie", b""))
            if signed_in is not None:
                return signed_in  # a POST still needs its CSRF token
            if method in ("GET", "HEAD"):
                await redirect_to_login(send, scope)
                return None
        message = (
            "missing bearer token"
            if not given
            else "API key not accepted (unknown, revoked, or its user is disabled)"
            if given.startswith(b"Bearer aim_")  # never which: that would tell a guesser
            else "invalid bearer token"
        )
        await send_json(
            send,
            401,
            {"error": "unauthorized", "message": message},
            [(b"www-authenticate", b'Bearer realm="ai-memory"')],
        )
        return None

    async def _key_user(self, given: bytes) -> Principal | None:
        if not given.startswith(b"Bearer aim_"):
            return None
        return await self.keys(given[len(b"Bearer ") :].decode("ascii", "replace"))


class BodyLimit:
    """Refuse bodies over ``limit`` bytes with 413, before any handler sees them."""

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        body = await self.read(scope, receive, send)
        if body is None:
            return
        await self.app(scope, replay_body(body, receive), send)

    async def read(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The whole body; None once a body over the limit was refused (413), or when the
        client left mid-body (a partial body reaches no handler)."""
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send, int(declared))
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send, size)
                return None
            if not message.get("more_body", False):
                return b"".join(chunks) + chunk if chunks else chunk
            chunks.append(chunk)

    async def _refuse(self, send: Send, size: int) -> None:
        await send_json(
            send,
            413,
            {
                "error": "too_large",
                "message": f"request body is over {self.limit} bytes (got at least {size})",
            },
            [(b"connection", b"close")],
        )


class HostCheck:
    """The one Host/Origin rule (see :mod:`ai_memory.web.origin`), before anything else runs."""

    def __init__(self, app: ASGIApp, bind_host: str) -> None:
        self.app = app
        self.rule = HostRule(bind_host)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refusal = self.refusal(scope)
        if refusal is not None:
            await send_json(send, *refusal, [])
            return
        await self.app(scope, receive, send)

    def refusal(self, scope: Scope) -> tuple[int, dict[str, str]] | None:
        """The status and body a request breaking the rule is answered with; None if it passes.
        A path holding a control character (``%0A`` decoded) is refused here too: a route's
        ``$`` matches before a final newline, so ``a.md%0A`` would reach page ``a.md``."""
        if _CONTROL.search(scope["path"]):
            message = "the request path holds a control character"
            return 400, {"error": "invalid_request", "message": message}
        raw = scope.get("headers") or []
        hosts = [value for name, value in raw if name == b"host"]
        problem = self.rule.host_problem(hosts)
        if problem is not None:
            status, code = (400, "invalid_request") if len(hosts) != 1 else (421, "wrong_host")
            return status, {"error": code, "message": problem}
        origins = [value for name, value in raw if name == b"origin"]
        method = scope.get("method", "GET")
        if origins and self.rule.checks_origin(method, webauth.is_web_path(scope["path"])):
            origin_problem = (
                "more than one Origin header"
                if len(origins) > 1
                else self.rule.origin_problem(origins[0], hosts[0] if hosts else b"")
            )
            if origin_problem is not None:
                return 403, {"error": "forbidden_origin", "message": origin_problem}
        return None


class InFlightLimit:
    """At most ``limit`` requests handled at once; more get 503. ``/healthz`` always answers.

    Counting requests, not sockets: idle connections cost nothing here (the
    connection layer times them out), so they cannot starve real clients.
    """

    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit
        self.active = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in PUBLIC_PATHS:
            await self.app(scope, receive, send)
            return
        if self.active >= self.limit:
            await self.refuse(send)
            return
        self.active += 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.active -= 1

    async def refuse(self, send: Send) -> None:
        """503: ``limit`` requests are being handled already."""
        await send_json(
            send,
            503,
            {
                "error": "busy",
                "message": f"the server is handling {self.active} requests; retry shortly",
            },
            [(b"retry-after", b"1")],
        )
