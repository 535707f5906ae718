"""HTTP/1.1 connections with deadlines and caps: slow or idle clients cannot hold the server.

uvicorn's httptools protocol (the C parser llhttp: a fraction of the pure-Python
h11's CPU per request) times out a keep-alive connection only after a response:
a socket that never finishes its headers (slow-loris) stays open for good, its
parser buffers headers of any size, and its ``limit_concurrency`` counts idle
sockets, so a flood of them would answer every real request 503. This subclass
adds, per connection:

* a header deadline, from the connection (or from the first byte of the next
  request on a kept-alive one) to the end of the headers;
* a cap on the request line plus headers (``400`` past it, then close);
* a body deadline, from the end of the headers to the end of the body;
* a cap on requests per connection (the last answer says ``Connection: close``);

and, across connections, a cap on how many are open: a new connection past it
closes the one that has been idle (or stuck in its headers) the longest, so a
flood of idle sockets makes room for real clients instead of locking them out.
Only a connection idle for a moment (up to 1 s) is closed this way: busy
keep-alive clients between two requests keep theirs. With none to close, the
new one is still read (under the header deadline): ``GET /healthz`` is
answered, anything else gets 503 and the connection closes.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from uvicorn._types import ASGI3Application, ASGIReceiveCallable, ASGISendCallable, Scope
from uvicorn.config import Config as UvicornConfig
from uvicorn.protocols.http.flow_control import CLOSE_HEADER
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

from ai_memory.config import ServerSettings
from ai_memory.web.lone_request import REQUESTS_KEY

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"

Phase = Literal["headers", "body", "busy", "idle"]
# A connection in one of these phases holds no request a handler is working on.
EVICTABLE: frozenset[Phase] = frozenset({"headers", "idle"})
# Where the parser is in the byte stream, which can run ahead of the handlers (pipelining).
Parsing = Literal["between", "head", "body"]


def _plain_answer(status: bytes, text: bytes) -> bytes:
    """A whole HTTP/1.1 answer, written outside any request's cycle, then the socket closes."""
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(text)).encode() + b"\r\nconnection: close\r\n\r\n" + text
    )


TIMED_OUT = _plain_answer(b"408 Request Timeout", b"request headers not received in time\n")


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout_s: float
    body_timeout_s: float
    keep_alive_s: float
    max_header_bytes: int
    max_connections: int
    max_requests_per_connection: int
    eviction_grace_s: float

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> ConnectionLimits:
        return cls(
            header_timeout_s=settings.header_timeout_s,
            body_timeout_s=settings.body_timeout_s,
            keep_alive_s=settings.keep_alive_s,
            max_header_bytes=settings.max_header_bytes,
            max_connections=settings.max_connections,
            max_requests_per_connection=settings.max_requests_per_connection,
            # A connection just opened or just answered is a live client's, not yet idle.
            eviction_grace_s=min(1.0, settings.header_timeout_s / 2),
        )

    def too_large(self) -> bytes:
        text = f"request line and headers exceed {self.max_header_bytes} bytes\n"
        return _plain_answer(b"400 Bad Request", text.encode())


def protocol_class(limits: ConnectionLimits) -> type[GuardedHttpToolsProtocol]:
    """A protocol class bound to ``limits`` (uvicorn builds protocols from a class)."""
    return type("BoundHttpToolsProtocol", (GuardedHttpToolsProtocol,), {"limits": limits})


class GuardedHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with the deadlines and caps above."""

    limits: ClassVar[ConnectionLimits]

    def __init__(
        self,
        config: UvicornConfig,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self.phase: Phase = "headers"
        self.phase_since = self.loop.time()
        self.parsing: Parsing = "between"
        self.head_bytes = 0
        self.requests = 0
        self.bytes_seen = False
        self.deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._enter("headers", self.limits.header_timeout_s)
        self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.phase == "idle":
            # Bytes on an idle connection: a new request's head, or the rest of an answered body.
            self._enter("body" if self.parsing == "body" else "headers", None)
        self.bytes_seen = self.bytes_seen or (self.phase == "headers" and bool(data))
        if self.parsing != "body":
            # Exact while one request's head spans reads; a head that starts in the read
            # ending the request before it is counted from the next read on.
            self.head_bytes += len(data)
        super().data_received(data)
        if self.transport.is_closing():
            return
        if self.parsing != "body" and self.head_bytes > self.limits.max_header_bytes:
            self._refuse_oversized_head()
        elif self.deadline is None:
            # Armed once the read is parsed: a request whole in one read needs no timer.
            self._arm()

    # Parser callbacks, each after uvicorn's own.
    def on_message_begin(self) -> None:
        super().on_message_begin()
        self.parsing = "head"

    def on_headers_complete(self) -> None:
        before = self.cycle
        super().on_headers_complete()
        self.parsing = "body"
        cycle = self.cycle
        if cycle is None or cycle is before:  # an upgrade: the cycle never started
            return
        self.requests += 1
        cycle.scope[REQUESTS_KEY] = self.tasks  # type: ignore[literal-required]
        if cycle.scope["method"] != "HEAD":  # a HEAD answer has no body write to wait for
            cycle.transport = HeldHead(self.transport)
        if self.requests >= self.limits.max_requests_per_connection:
            cycle.keep_alive = False  # uvicorn adds ``connection: close`` to the answer
        # A queued request's reading is paused: its body's clock starts when it does.
        self._enter("busy" if self.pipeline else "body", None)

    def on_message_complete(self) -> None:
        super().on_message_complete()
        self.parsing, self.head_bytes = "between", 0
        cycle = self.cycle
        if cycle is not None and self.phase == "body":
            if cycle.response_complete:  # answered before its body was read
                self._enter("idle", self.limits.keep_alive_s)
            else:
                self._enter("busy", None)

    def on_response_complete(self) -> None:
        super().on_response_complete()  # may start a pipelined request
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete:
            if self.parsing == "body" and not self.pipeline:
                self._enter("body", self.limits.body_timeout_s)
            else:
                self._enter("busy", None)
        elif self.parsing == "head":
            self._enter("headers", self.limits.header_timeout_s)
        else:
            self._enter("idle", None)  # uvicorn's keep-alive timer takes over

    def _enter(self, phase: Phase, timeout_s: float | None) -> None:
        self._cancel()
        self.phase, self.phase_since = phase, self.loop.time()
        if phase == "headers":
            self.bytes_seen = False
        if timeout_s is not None:
            self.deadline = self.loop.call_later(timeout_s, self._timed_out, phase)

    def _arm(self) -> None:
        limits = self.limits
        if self.phase in ("headers", "body"):
            timeout_s = (
                limits.header_timeout_s if self.phase == "headers" else limits.body_timeout_s
            )
            self.deadline = self.loop.call_later(timeout_s, self._timed_out, self.phase)

    def _cancel(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _timed_out(self, phase: Phase) -> None:
        self.deadline = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        log.debug("closing a connection from %s: its %s did not arrive in time", self.client, phase)
        if phase == "headers" and self.bytes_seen and not self._answering():
            self.transport.write(TIMED_OUT)
        self.transport.close()

    def _refuse_oversized_head(self) -> None:
        """The parser would buffer a head of any size: past the cap, answer 400 and close."""
        log.debug("closing a connection from %s: its request head is too large", self.client)
        if not self._answering():
            self.transport.write(self.limits.too_large())
        self.transport.close()

    def _answering(self) -> bool:
        """True while a handler's answer may be on the wire, where no other bytes can go."""
        return self.cycle is not None and not self.cycle.response_complete

    def _make_room(self) -> None:
        """Past the cap, close the longest-idle connection; with none idle, this one gets 503s."""
        peers = [
            c
            for c in self.connections
            if isinstance(c, GuardedHttpToolsProtocol) and not c.transport.is_closing()
        ]
        if len(peers) <= self.limits.max_connections:
            return
        now = self.loop.time()
        idle = [
            c
            for c in peers
            if c is not self
            and c.phase in EVICTABLE
            and now - c.phase_since >= self.limits.eviction_grace_s
        ]
        if idle:
            min(idle, key=lambda c: c.phase_since).transport.close()
            return
        log.warning("connection limit: %d open, all mid-request", len(peers) - 1)
        self.app = OverCapacity(self.app, len(peers) - 1)  # read by uvicorn at each request


class HeldHead(asyncio.Transport):
    """The connection as one request's cycle writes to it: an answer's status line and
    headers wait for its first body bytes, so the answer leaves in one write (one system
    call, one packet) rather than two. Only a head that declares its content length is
    held, as its body follows at once; a streamed answer's head, a ``100 Continue`` and
    anything after go out as they come, and a close sends what is held first."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self._transport = transport
        self._head: bytes | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if self._head is not None:
            data, self._head = self._head + data, None
        elif data[:9] == b"HTTP/1.1 " and data[9:10] != b"1" and b"\r\ncontent-length:" in data:
            self._head = bytes(data)
            return
        self._transport.write(data)

    def close(self) -> None:
        if self._head is not None:
            head, self._head = self._head, None
            self._transport.write(head)
        self._transport.close()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)


class OverCapacity:
    """What a connection past the cap gets: /healthz answered, anything else 503 and close."""

    def __init__(self, app: ASGI3Application, open_connections: int) -> None:
        self.app = app
        self.open_connections = open_connections

    async def __call__(
        self, scope: Scope, receive: ASGIReceiveCallable, send: ASGISendCallable
    ) -> None:
        if scope["type"] == "http" and scope["path"] == HEALTH_PATH:
            await self.app(scope, receive, send)
            return
        message = f"the server is at its connection limit ({self.open_connections} open); retry"
        body = json.dumps({"error": "busy", "message": message}).encode()
        await send(
            {
                "type": "http.response.start",
                "status": 503,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                    (b"retry-after", b"1"),
                    CLOSE_HEADER,
                ],
            }
        )
        await send({"type": "http.response.body", "body": body, "more_body": False})
