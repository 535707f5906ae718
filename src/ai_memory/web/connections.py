"""HTTP/1.1 connections with deadlines and a cap: slow or idle clients cannot hold the server.

uvicorn's h11 protocol times out a keep-alive connection only after a response:
a socket that never finishes its headers (slow-loris) stays open for good, and
its ``limit_concurrency`` counts idle sockets, so a flood of them would answer
every real request 503. This subclass adds, per connection:

* a header deadline, from the connection (or from the first byte of the next
  request on a kept-alive one) to the end of the headers;
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
from uvicorn.protocols.http.h11_impl import H11Protocol, RequestResponseCycle
from uvicorn.server import ServerState

from ai_memory.config import ServerSettings

log = logging.getLogger(__name__)

HEALTH_PATH = "/healthz"

Phase = Literal["headers", "body", "busy", "idle"]
# A connection in one of these phases holds no request a handler is working on.
EVICTABLE: frozenset[Phase] = frozenset({"headers", "idle"})


def _plain_answer(status: bytes, text: bytes) -> bytes:
    """A whole HTTP/1.1 answer, written before any request was parsed, then the socket closes."""
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: text/plain; charset=utf-8\r\n"
        b"content-length: " + str(len(text)).encode() + b"\r\nconnection: close\r\n\r\n" + text
    )


TIMED_OUT = _plain_answer(b"408 Request Timeout", b"request headers not received in time\n")


@dataclass(frozen=True)
class ConnectionLimits:
    header_timeout_s: float
    body_timeout_s: float
    max_connections: int
    max_requests_per_connection: int
    eviction_grace_s: float

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> ConnectionLimits:
        return cls(
            header_timeout_s=settings.header_timeout_s,
            body_timeout_s=settings.body_timeout_s,
            max_connections=settings.max_connections,
            max_requests_per_connection=settings.max_requests_per_connection,
            # A connection just opened or just answered is a live client's, not yet idle.
            eviction_grace_s=min(1.0, settings.header_timeout_s / 2),
        )


def protocol_class(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class bound to ``limits`` (uvicorn builds protocols from a class)."""
    return type("BoundH11Protocol", (GuardedH11Protocol,), {"limits": limits})


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines and caps above."""

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
            self._enter("headers", self.limits.header_timeout_s)
        self.bytes_seen = self.bytes_seen or (self.phase == "headers" and bool(data))
        before = self.cycle
        super().data_received(data)
        self._after_events(before)

    def on_response_complete(self) -> None:
        self._enter("idle", None)  # uvicorn's keep-alive timer takes over
        before = self.cycle
        super().on_response_complete()
        self._after_events(before)  # a pipelined request may have started

    def _after_events(self, before: RequestResponseCycle | None) -> None:
        cycle = self.cycle
        if cycle is not None and cycle is not before:
            self.requests += 1
            if self.requests >= self.limits.max_requests_per_connection:
                cycle.keep_alive = False
                self.headers.append(CLOSE_HEADER)  # the scope's list: the answer says so, too
            if cycle.more_body:
                self._enter("body", self.limits.body_timeout_s)
            else:
                self._enter("busy", None)
        elif cycle is not None and self.phase == "body" and not cycle.more_body:
            self._enter("busy", None)

    def _enter(self, phase: Phase, timeout_s: float | None) -> None:
        self._cancel()
        self.phase, self.phase_since = phase, self.loop.time()
        if phase == "headers":
            self.bytes_seen = False
        if timeout_s is not None:
            self.deadline = self.loop.call_later(timeout_s, self._timed_out, phase)

    def _cancel(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _timed_out(self, phase: Phase) -> None:
        self.deadline = None
        if self.transport.is_closing() or self.transport.get_protocol() is not self:
            return
        log.debug("closing a connection from %s: its %s did not arrive in time", self.client, phase)
        if phase == "headers" and self.bytes_seen:
            self.transport.write(TIMED_OUT)
        self.transport.close()

    def _make_room(self) -> None:
        """Past the cap, close the longest-idle connection; with none idle, this one gets 503s."""
        peers = [
            c
            for c in self.connections
            if isinstance(c, GuardedH11Protocol) and not c.transport.is_closing()
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
