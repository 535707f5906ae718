"""The HTTP layer alone, for bench_http_protocol ``--bare``: each tree's ``server.run`` serving
an ASGI app that only reads the body and answers 202, so the server's CPU per request is
the protocol's parsing and writing, its guards and the event loop, and nothing of the app's.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.common import free_port
from benchmarks.keepalive import Connection

SERVE = """
import sys
from ai_memory.config import ServerSettings
from ai_memory.server import run

ANSWER = b'{"status":"accepted","observation_id":12345}'


async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        while (message := await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(ANSWER))]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": ANSWER})


run(app, ServerSettings(bind=f"127.0.0.1:{sys.argv[1]}"))
"""
# What a PostToolUse hook event looks like on the wire (bench_hooks.single_posts).
TARGET = "/hook?project=bench&agent=claude-code&event=PostToolUse&session_id=s-1&ingest_key=k-1"
BODY = json.dumps(
    {
        "tool_name": "Bash",
        "tool_input": {"command": "make test 1"},
        "tool_response": {"stdout": "ok " * 40},
    }
).encode()


@dataclass
class BareServer:
    """``server.run`` of the tree at ``source`` (this checkout's without one), bare app."""

    source: Path | None
    port: int = field(default_factory=free_port)
    token: str = "unused"
    process: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> BareServer:
        env = dict(os.environ)
        if self.source is not None:
            env["PYTHONPATH"] = str(self.source)
        self.process = subprocess.Popen(
            [sys.executable, "-c", SERVE, str(self.port)], env=env, stderr=subprocess.DEVNULL
        )
        for _ in range(600):
            try:
                asyncio.run(posts(self, 1, 1))
                return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("bare server did not start")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.terminate()
        self.process.wait(timeout=30)


async def posts(server: BareServer, events: int, clients: int) -> tuple[float, int]:
    answered = 0

    async def client() -> None:
        nonlocal answered
        conn = Connection(server.port, server.token)
        for _ in range(events // clients):
            status, _ = await conn.post(TARGET, BODY)
            answered += status == 202
        conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    return time.perf_counter() - started, answered


def bare_cases(events: int) -> dict[str, Callable[[BareServer, str], Awaitable[tuple[float, int]]]]:
    def hook(clients: int) -> Callable[[BareServer, str], Awaitable[tuple[float, int]]]:
        async def run(server: BareServer, tag: str) -> tuple[float, int]:
            return await posts(server, events, clients)

        return run

    return {"bare POST, 1 client": hook(1), "bare POST, 16 clients": hook(16)}
