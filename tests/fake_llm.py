"""A fake LLM service on loopback that speaks each provider's wire format.

It serves OpenAI chat completions (``/v1/chat/completions``), Anthropic messages
(``/v1/messages``), Gemini ``/v1beta/models/{model}:generateContent`` and OpenAI
``/v1/embeddings``, answering from a scripted queue of :class:`Reply` (then from
``responder`` if set), and records every request. Use it as a context manager
(``with FakeLlm() as fake:``) or through the ``fake_llm`` fixture::

    fake.push(answer({"title": "x"}), error(429, retry_after=1), truncated('{"ti'))
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

GEMINI = re.compile(r"^/v1beta/models/(?P<model>[^/:]+):generateContent$")


@dataclass(frozen=True)
class Reply:
    """One scripted answer: ``content`` (JSON-able, or a raw string sent as is),
    an HTTP ``status`` with an error body, a truncated answer, after ``delay_s``."""

    content: Any = None
    status: int = 200
    truncated: bool = False
    delay_s: float = 0.0
    headers: dict[str, str] = field(default_factory=dict)
    raw: Any = None  # when set: the whole response body, whatever the wire format wants


def answer(content: Any, delay_s: float = 0.0) -> Reply:
    return Reply(content=content, delay_s=delay_s)


def error(status: int, message: str = "scripted error", retry_after: float | None = None) -> Reply:
    headers = {"Retry-After": f"{retry_after:g}"} if retry_after is not None else {}
    return Reply(content=message, status=status, headers=headers)


def raw(body: Any) -> Reply:
    """A response body sent as is: the provider answering a shape its API never had."""
    return Reply(raw=body)


def truncated(text: str = '{"title": "cut') -> Reply:
    return Reply(content=text, truncated=True)


def slow(delay_s: float, content: Any = None) -> Reply:
    return Reply(content=content if content is not None else {}, delay_s=delay_s)


@dataclass
class Request:
    path: str
    headers: dict[str, str]
    body: Any


class FakeLlm:
    """``with FakeLlm() as fake:`` serves on ``fake.url`` until the block ends."""

    def __init__(self, embedding_dim: int = 8) -> None:
        self.replies: deque[Reply] = deque()
        self.requests: list[Request] = []
        self.responder: Callable[[Request], Reply] | None = None
        self.embedding_dim = embedding_dim
        self.embeddings_status = 200  # set to 503, say, to make /embeddings fail
        self.in_flight = 0
        self.max_in_flight = 0
        self.lock = threading.Lock()
        handler = type("Handler", (_Handler,), {"fake": self})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @property
    def openai_url(self) -> str:
        return f"{self.url}/v1"

    @property
    def gemini_url(self) -> str:
        return f"{self.url}/v1beta"

    def push(self, *replies: Reply) -> None:
        with self.lock:
            self.replies.extend(replies)

    def bodies(self) -> list[Any]:
        with self.lock:
            return [r.body for r in self.requests]

    def models(self) -> list[str]:
        """The model each chat request named, in order (Gemini's from its path)."""
        with self.lock:
            return [_model_of(r) for r in self.requests if not r.path.endswith("/embeddings")]

    def next_reply(self, request: Request) -> Reply:
        with self.lock:
            self.requests.append(request)
            if self.replies:
                return self.replies.popleft()
        if self.responder is not None:
            return self.responder(request)
        return error(500, "no reply scripted")

    def __enter__(self) -> FakeLlm:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_llm() -> Iterator[FakeLlm]:
    with FakeLlm() as fake:
        yield fake


def _model_of(request: Request) -> str:
    match = GEMINI.match(request.path)
    if match:
        return match["model"]
    return str(request.body.get("model", "")) if isinstance(request.body, dict) else ""


def _text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content)


def openai_body(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": _text(reply.content)},
                "finish_reason": "length" if reply.truncated else "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def anthropic_body(reply: Reply, model: str) -> dict[str, Any]:
    if isinstance(reply.content, str):  # not JSON: the model answered in text, no tool call
        block: dict[str, Any] = {"type": "text", "text": reply.content}
    else:
        block = {"type": "tool_use", "id": "toolu_fake", "name": "answer", "input": reply.content}
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [block],
        "stop_reason": "max_tokens" if reply.truncated else "tool_use",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def gemini_body(reply: Reply) -> dict[str, Any]:
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": [{"text": _text(reply.content)}]},
                "finishReason": "MAX_TOKENS" if reply.truncated else "STOP",
            }
        ],
        "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1},
    }


def error_body(path: str, reply: Reply) -> dict[str, Any]:
    message = _text(reply.content)
    if path.endswith("/messages"):
        kind = "rate_limit_error" if reply.status == 429 else "api_error"
        return {"type": "error", "error": {"type": kind, "message": message}}
    if path.startswith("/v1beta"):
        return {"error": {"code": reply.status, "message": message, "status": "UNAVAILABLE"}}
    return {"error": {"message": message, "type": "server_error", "code": None}}


def embedding(text: str, dim: int) -> list[float]:
    """A deterministic unit vector per text, so equal texts embed equally."""
    digest = hashlib.sha256(text.encode()).digest()
    raw = [digest[i % len(digest)] - 127.5 for i in range(dim)]
    norm = math.sqrt(sum(x * x for x in raw)) or 1.0
    return [x / norm for x in raw]


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLlm
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle's algorithm and the
        # client's delayed ACK hold the body back ~40 ms per answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw or b"{}")
        except ValueError:
            body = raw.decode(errors="replace")
        request = Request(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        model = body.get("model", "") if isinstance(body, dict) else ""
        if self.path.endswith("/embeddings"):
            with self.fake.lock:
                self.fake.requests.append(request)
            self._embeddings(body)
            return
        reply = self.fake.next_reply(request)
        with self.fake.lock:
            self.fake.in_flight += 1
            self.fake.max_in_flight = max(self.fake.max_in_flight, self.fake.in_flight)
        try:
            self._reply(reply, model)
        finally:
            with self.fake.lock:
                self.fake.in_flight -= 1

    def _reply(self, reply: Reply, model: str) -> None:
        if reply.delay_s:
            time.sleep(reply.delay_s)
        if reply.raw is not None:
            self._send(reply.status, reply.raw, reply.headers)
        elif reply.status >= 400:
            self._send(reply.status, error_body(self.path, reply), reply.headers)
        elif self.path.endswith("/chat/completions"):
            self._send(200, openai_body(reply, model), reply.headers)
        elif self.path.endswith("/messages"):
            self._send(200, anthropic_body(reply, model), reply.headers)
        elif GEMINI.match(self.path):
            self._send(200, gemini_body(reply), reply.headers)
        else:
            self._send(404, {"error": {"message": f"no route {self.path}"}}, {})

    def _embeddings(self, body: Any) -> None:
        if self.fake.embeddings_status >= 400:
            failed = Reply(content="embeddings down", status=self.fake.embeddings_status)
            self._send(failed.status, error_body(self.path, failed), {})
            return
        texts = body.get("input", []) if isinstance(body, dict) else []
        texts = [texts] if isinstance(texts, str) else texts
        data = [
            {"object": "embedding", "index": i, "embedding": embedding(t, self.fake.embedding_dim)}
            for i, t in enumerate(texts)
        ]
        self._send(200, {"object": "list", "data": data, "model": body.get("model", "")}, {})

    def _send(self, status: int, payload: Any, headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            return
