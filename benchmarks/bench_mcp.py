"""Per-call overhead of ``memory_query`` over MCP, and the stdio bridge's start-up time.

Prints p50/p95 latency of the same search as a direct function call (in
process), over MCP streamable HTTP (legacy handshake, one session), and over
the stdio bridge (one session), the overhead of each transport over the direct
call, and how long the bridge, launched as install-mcp writes it
(``python -I -S …/agent_entry.py mcp-bridge``), takes from spawn to answering
``initialize`` (goal: 50 ms), beside the bare interpreter (``python -I -S -c
pass``) timed in the same loop.

    python benchmarks/bench_mcp.py [--pages 1000] [--calls 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from ai_memory.cli.mcp import bridge_command
from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime
from benchmarks.common import Server, fresh_data_dir, percentile, words

PROJECT = "bench"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "1"},
    },
}


def queries(count: int) -> list[str]:
    rng = random.Random(7)
    return [words(rng, 3) for _ in range(count)]


def seed_and_time_direct(data_dir: Path, pages: int, qs: list[str]) -> list[float]:
    """Write the corpus in process, then time the search function itself."""
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        rng = random.Random(pages)
        scope = Scope.of(None, PROJECT)
        for i in range(pages):
            runtime.wiki.write_page(
                scope.page(f"notes/n{i}.md"), f"# Note {i}\n\n{words(rng, 200)}"
            )
        for text in qs[:10]:  # warm up like the served runs
            runtime.retrieval.search_sync(SearchRequest.parse({"query": text, "project": PROJECT}))
        timings = []
        for text in qs:
            request = SearchRequest.parse({"query": text, "project": PROJECT, "limit": 10})
            started = time.perf_counter()
            runtime.retrieval.search_sync(request)
            timings.append(time.perf_counter() - started)
        return timings
    finally:
        runtime.stop()


async def timed_calls(client: Client, qs: list[str]) -> list[float]:
    timings = []
    for text in qs:
        started = time.perf_counter()
        result = await client.call_tool("memory_query", {"query": text, "project": PROJECT})
        timings.append(time.perf_counter() - started)
        assert not result.is_error, result.content
    return timings


async def over_http(server: Server, qs: list[str]) -> list[float]:
    http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {server.token}"}, timeout=60)
    async with http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with Client(transport, mode="legacy") as client:
            return await timed_calls(client, qs)


async def over_bridge(server: Server, qs: list[str]) -> list[float]:
    launch = bridge_command(server.data_dir, server.url)
    params = StdioServerParameters(command=launch[0], args=launch[1:])
    async with Client(params, mode="legacy") as client:
        return await timed_calls(client, qs)


def bridge_startup(server: Server, runs: int) -> tuple[list[float], list[float]]:
    """Spawn to the ``initialize`` answer on stdout, as an agent sees it; and the floor.

    Each spawn follows one run of the bare interpreter, so both see the same load.
    """
    timings, floor = [], []
    line = (json.dumps(INITIALIZE) + "\n").encode()
    command = bridge_command(server.data_dir, server.url)
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
        floor.append(time.perf_counter() - started)
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert proc.stdin and proc.stdout
        proc.stdin.write(line)
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        timings.append(time.perf_counter() - started)
        assert answer["result"]["serverInfo"]["name"] == "ai-memory"
        proc.stdin.close()
        proc.wait(timeout=30)
    return timings, floor


def report(label: str, timings: list[float], base: list[float] | None = None) -> None:
    p50, p95 = percentile(timings, 0.5) * 1000, percentile(timings, 0.95) * 1000
    line = f"{label:<34} p50 {p50:8.2f} ms   p95 {p95:8.2f} ms"
    if base is not None:
        o50 = p50 - percentile(base, 0.5) * 1000
        o95 = p95 - percentile(base, 0.95) * 1000
        line += f"   overhead p50 {o50:+7.2f} ms  p95 {o95:+7.2f} ms"
    print(line, flush=True)


def run(pages: int, calls: int) -> None:
    qs = queries(calls)
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = fresh_data_dir(Path(tmp), "data")
        direct = seed_and_time_direct(data_dir, pages, qs)
        with Server(data_dir) as server:
            asyncio.run(over_http(server, qs[:10]))  # warm up the server's caches
            http = asyncio.run(over_http(server, qs))
            bridged = asyncio.run(over_bridge(server, qs))
            startup, floor = bridge_startup(server, 20)
    print(f"memory_query over {pages} pages, {calls} calls each:")
    report("direct search (in process)", direct)
    report("MCP streamable HTTP (legacy)", http, direct)
    report("MCP stdio bridge", bridged, direct)
    report("floor: python -I -S -c pass", floor)
    report("bridge spawn -> initialize answer", startup)
    p50 = percentile(startup, 0.5)
    verdict = "ok" if p50 <= 0.05 else "OVER the 50 ms goal"
    ratio = p50 / percentile(floor, 0.5)
    print(f"bridge start-up {ratio:.1f}x the floor; goal 50 ms: {verdict}")
    print(f"bridge command: {shlex.join(bridge_command(None, None))} --data-dir … --server …")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    run(args.pages, args.calls)


if __name__ == "__main__":
    main()
