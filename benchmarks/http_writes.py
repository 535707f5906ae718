"""HTTP page writes for bench_store: PUTs from keep-alive clients, the server measured alone.

The clients are asyncio connections (``benchmarks/keepalive.py``), not httpx in
threads, so on a 2-core machine the figure is the server's, not the client's.
Beside the rate it prints the server's CPU per page (user + system time of the
server process over the timed writes, which means more than wall time on a shared
machine) and how many pages the writer's group commit put in one transaction.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Server, fresh_data_dir
from benchmarks.keepalive import Connection

# What issue 15 asks of HTTP page writes, printed beside each figure.
HTTP_TARGETS = {1: 500, 8: 1500}


@dataclass(frozen=True, slots=True)
class HttpWrites:
    rate: float  # acknowledged pages per second
    cpu_ms: float  # server CPU per page
    per_transaction: float  # pages per writer transaction


def bench_http(root: Path, pages: list[tuple[str, str]], workers: int) -> HttpWrites:
    """PUT every page, ``workers`` clients at once."""
    data_dir = fresh_data_dir(root, f"http-{len(pages)}-{workers}")
    with Server(data_dir) as server:
        return asyncio.run(_put_all(server, pages, workers))


async def _put_all(server: Server, pages: list[tuple[str, str]], workers: int) -> HttpWrites:
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
    before = await _writer_counts(warm)
    assert server.process is not None
    cpu = _cpu_seconds(server.process.pid)
    chunks = [pages[i::workers] for i in range(workers)]
    start = time.perf_counter()
    await asyncio.gather(*(client(chunk) for chunk in chunks))
    elapsed = time.perf_counter() - start
    cpu = _cpu_seconds(server.process.pid) - cpu
    after = await _writer_counts(warm)
    warm.close()
    transactions = max(1, after[0] - before[0])
    return HttpWrites(
        len(pages) / elapsed, cpu * 1000 / len(pages), (after[1] - before[1]) / transactions
    )


async def _writer_counts(conn: Connection) -> tuple[int, int]:
    """The writer's (transactions, commands) so far, from the admin status."""
    status, answer = await conn.request("GET", "/admin/status", b"")
    if status != 200:
        raise RuntimeError(f"GET /admin/status: {status} {answer[:200]!r}")
    writer = json.loads(answer)["writer"]
    return int(writer["transactions"]), int(writer["commands"])


def _cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def http_line(size: int, workers: int, result: HttpWrites) -> str:
    return (
        f"HTTP PUT         {size:>6} pages  {workers} writer(s): {result.rate:8.0f} pages/s"
        f"   server CPU {result.cpu_ms:.2f} ms/page, {result.per_transaction:.1f} pages/transaction"
        f"   target >= {HTTP_TARGETS[workers]:,}   (load {os.getloadavg()[0]:.1f})"
    )
