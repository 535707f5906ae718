"""HTTP page writes for bench_store: PUTs from keep-alive clients, the server measured alone.

The clients are asyncio connections (``benchmarks/keepalive.py``), not httpx in
threads, so on a 2-core machine the figure is the server's, not the client's.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from benchmarks.common import Server, fresh_data_dir
from benchmarks.keepalive import Connection

# What issue 15 asks of HTTP page writes, printed beside each figure.
HTTP_TARGETS = {1: 500, 8: 1500}


def bench_http(root: Path, pages: list[tuple[str, str]], workers: int) -> float:
    """PUT every page, ``workers`` clients at once; pages/s of acknowledged writes."""
    data_dir = fresh_data_dir(root, f"http-{len(pages)}-{workers}")
    with Server(data_dir) as server:
        return asyncio.run(_put_all(server, pages, workers))


async def _put_all(server: Server, pages: list[tuple[str, str]], workers: int) -> float:
    async def client(chunk: list[tuple[str, str]]) -> None:
        conn = Connection(server.port, server.token)
        for path, body in chunk:
            target = f"/api/v1/projects/default/bench/pages/{path}"
            status, answer = await conn.put(target, json.dumps({"body": body}).encode())
            if status != 200:
                raise RuntimeError(f"PUT {path}: {status} {answer[:200]!r}")
        conn.close()

    warm = Connection(server.port, server.token)  # the first request builds the routes
    await warm.put("/api/v1/projects/default/warm/pages/w.md", b'{"body": "warm up"}')
    # /mcp answers once the endpoint is built in the background: wait for that, so the
    # timed writes do not share the CPU with the rest of the server's start-up.
    await warm.post("/mcp", b"{}")
    warm.close()
    chunks = [pages[i::workers] for i in range(workers)]
    start = time.perf_counter()
    await asyncio.gather(*(client(chunk) for chunk in chunks))
    return len(pages) / (time.perf_counter() - start)


def http_line(size: int, workers: int, rate: float) -> str:
    return (
        f"HTTP PUT         {size:>6} pages  {workers} writer(s): {rate:8.0f} pages/s"
        f"   target >= {HTTP_TARGETS[workers]:,}"
    )
