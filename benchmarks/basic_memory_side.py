"""basic-memory's side of the query side-by-side; runs in basic-memory's own venv.

    <bm-venv>/bin/python benchmarks/basic_memory_side.py NOTES_DIR QUERIES_JSON HOME [--add-only]

Registers NOTES_DIR as project ``bench`` (keyword search only), which indexes
it, indexes it again with ``basic-memory reindex --full``, then starts
``basic-memory mcp`` on stdio and asks its ``search_notes`` tool
(``search_type="text"``, 10 results) every query through an MCP client session.
Prints one JSON line: p50/p95 in ms, and the seconds each step took as a whole
process: ``project add`` (``add_s``: it indexes the new notes before it
returns) and ``reindex --full --search`` (``full_reindex_s``: it indexes every
note again; skipped with ``--add-only``), with the CPU time (user + system) of
each (``add_cpu_s``, ``full_reindex_cpu_s``).
Standard library plus the ``mcp`` package basic-memory itself depends on.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
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
    add_only = sys.argv[4:] == ["--add-only"]
    cli = str(Path(sys.executable).parent / "basic-memory")
    env = {
        **os.environ,
        "BASIC_MEMORY_CONFIG_DIR": str(home),
        "BASIC_MEMORY_SEMANTIC_SEARCH_ENABLED": "false",
    }
    # Indexing as whole processes, each timed alone: `project add` indexes the new notes
    # inline (they are searchable when it returns); `reindex --full` indexes them all
    # again (a plain `reindex` is incremental: it skips the unchanged files).
    commands = {"add_s": ["project", "add", "bench", str(notes)]}
    if not add_only:
        commands["full_reindex_s"] = ["reindex", "--full", "--search", "--project", "bench"]
    steps = {}
    for name, args in commands.items():
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run([cli, *args], env=env, check=True, stdout=subprocess.DEVNULL)
        steps[name] = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        steps[name.replace("_s", "_cpu_s")] = cpu  # user + system, less inflated by load
    queries = json.loads(queries_file.read_text())
    times = sorted(asyncio.run(ask(cli, env, queries)))
    p95 = times[int(0.95 * (len(times) - 1))]
    figures = {"p50_ms": statistics.median(times), "p95_ms": p95, "n": len(times)}
    print(json.dumps({**figures, **steps}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
