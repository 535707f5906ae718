"""basic-memory's side of the query side-by-side; runs in basic-memory's own venv.

    <bm-venv>/bin/python benchmarks/basic_memory_side.py NOTES_DIR QUERIES_JSON HOME

Registers NOTES_DIR as project ``bench`` (keyword search only), indexes it with
``basic-memory reindex``, then starts ``basic-memory mcp`` on stdio and asks
its ``search_notes`` tool (``search_type="text"``, 10 results) every query
through an MCP client session. Prints one JSON line: p50/p95 in ms, and the
seconds ``basic-memory project add`` and ``reindex`` took as whole processes
(``index_s``): adding the project already syncs its notes into the index.
Standard library plus the ``mcp`` package basic-memory itself depends on.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from mcp import ClientSession  # type: ignore[import-not-found, unused-ignore]
from mcp.client.stdio import (  # type: ignore[import-not-found, unused-ignore]
    StdioServerParameters,
    stdio_client,
)

WARMUP = 10


async def ask(cli: str, env: dict[str, str], queries: list[str]) -> list[float]:
    params = StdioServerParameters(command=cli, args=["mcp"], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        arguments = {"project": "bench", "search_type": "text", "page_size": 10}
        times = []
        for i, query in enumerate(queries[:WARMUP] + queries):
            started = time.perf_counter()
            result = await session.call_tool("search_notes", {**arguments, "query": query})
            if result.is_error:
                raise SystemExit(f"search_notes failed: {result.content}")
            if i >= WARMUP:
                times.append((time.perf_counter() - started) * 1000)
        return times


def main() -> int:
    notes, queries_file, home = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    cli = str(Path(sys.executable).parent / "basic-memory")
    env = {
        **os.environ,
        "BASIC_MEMORY_CONFIG_DIR": str(home),
        "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED": "false",
    }
    # Indexing as whole processes: `project add` already syncs the notes into the index,
    # `reindex` then rebuilds it; the notes are searchable after both, so both count.
    started = time.perf_counter()
    for args in (["project", "add", "bench", str(notes)], ["reindex", "--project", "bench"]):
        subprocess.run([cli, *args], env=env, check=True, stdout=subprocess.DEVNULL)
    index_s = time.perf_counter() - started
    queries = json.loads(queries_file.read_text())
    times = sorted(asyncio.run(ask(cli, env, queries)))
    p95 = times[int(0.95 * (len(times) - 1))]
    figures = {"p50_ms": statistics.median(times), "p95_ms": p95, "n": len(times)}
    print(json.dumps({**figures, "index_s": index_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
