"""Asking ``memory_query`` through a real MCP client (streamable HTTP, legacy handshake).

The eval's loop is synchronous; one task on a helper thread's event loop owns
the client for the whole run (its context must open and close in one task) and
answers the questions handed to it, one tool call each.
"""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import Future
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

_Job = tuple[dict[str, Any], Future[Any]] | None


class McpSearch:
    name = "MCP memory_query"

    def __init__(self, url: str, token: str) -> None:
        self.url = url
        self.token = token
        self.loop = asyncio.new_event_loop()
        self.ready: Future[None] = Future()
        self.thread = threading.Thread(target=self._thread, daemon=True)
        self.thread.start()
        self.ready.result(timeout=120)

    def _thread(self) -> None:
        self.loop.run_until_complete(self._serve())

    async def _serve(self) -> None:
        self.queue: asyncio.Queue[_Job] = asyncio.Queue()
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            async with httpx2.AsyncClient(headers=headers, timeout=120) as http:
                transport = streamable_http_client(f"{self.url}/mcp", http_client=http)
                async with Client(transport, mode="legacy") as client:
                    self.ready.set_result(None)
                    while (job := await self.queue.get()) is not None:
                        arguments, future = job
                        try:
                            future.set_result(await client.call_tool("memory_query", arguments))
                        except Exception as exc:
                            future.set_exception(exc)
        except Exception as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            raise

    def __call__(self, project: str, question: str, **extra: Any) -> dict[str, Any]:
        arguments = {
            "query": question,
            "project": project,
            "workspace": "default",
            "limit": 10,
            **extra,
        }
        future: Future[Any] = Future()
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (arguments, future))
        result = future.result(timeout=120)
        if result.is_error:
            raise RuntimeError(f"memory_query failed: {result.content}")
        payload: dict[str, Any] = result.structured_content or json.loads(result.content[0].text)
        return payload

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, None)
        self.thread.join(timeout=30)
