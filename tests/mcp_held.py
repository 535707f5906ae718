"""A real MCP client session held open on its own event loop, for many calls from sync code
(a hypothesis test body)."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import ServerProcess
from tests.mcp_support import connect


@dataclass(frozen=True)
class Outcome:
    code: int | None  # the JSON-RPC error code, None for a tool result
    text: str


class HeldClient:
    """One real MCP client session, held open on its own event loop for many calls."""

    def __init__(self, server: ServerProcess, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.client: Client | None = None
        self.stop: asyncio.Event | None = None

    def __enter__(self) -> HeldClient:
        self.thread.start()
        ready = threading.Event()
        self.held = asyncio.run_coroutine_threadsafe(self._hold(ready), self.loop)
        assert ready.wait(30), "the MCP client did not connect"
        return self

    async def _hold(self, ready: threading.Event) -> None:
        self.stop = asyncio.Event()
        async with connect(self.server) as client:
            self.client = client
            ready.set()
            await self.stop.wait()

    def call(self, name: str, args: dict[str, Any]) -> Outcome:
        assert self.client is not None
        future = asyncio.run_coroutine_threadsafe(
            self.client.call_tool(name, encodable(args)), self.loop
        )
        try:
            result = future.result(self.timeout)
        except MCPError as exc:
            return Outcome(exc.code, str(exc))
        except FutureTimeout:
            pytest.fail(f"no MCP answer within {self.timeout} s: {name} {args!r:.300}")
        return Outcome(None, json.dumps(result.structured_content)[:2000])

    def __exit__(self, *exc: object) -> None:
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
        self.held.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


def encodable(value: Any) -> Any:
    """What a real client can send at all: it cannot encode a lone surrogate."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value
