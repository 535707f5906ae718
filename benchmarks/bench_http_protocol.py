"""Server CPU per request by HTTP route, this checkout against baseline source trees, alternated.

What the HTTP protocol layer costs shows in the server's CPU per request more
than in wall time on a shared machine: each server (this checkout, and each
``--baseline NAME=SRC``) runs side by side and they take turns, round after round,
on the same cases: ``GET /healthz`` (the protocol and middleware alone),
``POST /hook`` and ``PUT`` page writes from one keep-alive client, then from
16 and 8 at once. Each figure is the server's CPU (every thread and reaped child, from
/proc) per request, with the rate and the load average at that moment.

    git archive HEAD src | tar -x -C /tmp/baseline
    python benchmarks/bench_http_protocol.py --baseline before=/tmp/baseline/src \
        [--rounds 3] [--bare]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_hooks import single_posts, warm_up
from benchmarks.bench_ingest_ab import start
from benchmarks.common import Server, words
from benchmarks.http_bare import BareServer, bare_cases
from benchmarks.keepalive import Connection

Run = Callable[[Server, str], Awaitable[tuple[float, int]]]


def server_cpu_ms(pid: int) -> float:
    """CPU the server has used so far: every thread, and the children it has reaped (git)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(f) for f in fields[11:15]) * 1000 / os.sysconf("SC_CLK_TCK")


async def healthz(server: Server, count: int) -> tuple[float, int]:
    conn = Connection(server.port, server.token)
    started = time.perf_counter()
    ok = 0
    for _ in range(count):
        status, _ = await conn.request("GET", "/healthz", b"")
        ok += status == 200
    seconds = time.perf_counter() - started
    conn.close()
    return seconds, ok


async def put_pages(server: Server, tag: str, pages: int, clients: int) -> tuple[float, int]:
    rng = random.Random(tag)
    bodies = [json.dumps({"body": words(rng, 300)}).encode() for _ in range(pages)]
    written = 0

    async def client(n: int) -> None:
        nonlocal written
        conn = Connection(server.port, server.token)
        for i in range(n, pages, clients):
            target = f"/api/v1/projects/default/proto/pages/{tag}/p{i}.md"
            status, _ = await conn.put(target, bodies[i])
            written += status == 200
        conn.close()

    started = time.perf_counter()
    await asyncio.gather(*(client(n) for n in range(clients)))
    return time.perf_counter() - started, written


def cases(events: int, pages: int) -> dict[str, Run]:
    async def probe(server: Server, tag: str) -> tuple[float, int]:
        return await healthz(server, events)

    def hook(clients: int) -> Run:
        async def run(server: Server, tag: str) -> tuple[float, int]:
            seconds, _, acked = await single_posts(server.port, server.token, clients, events, tag)
            return seconds, acked

        return run

    def put(clients: int) -> Run:
        async def run(server: Server, tag: str) -> tuple[float, int]:
            return await put_pages(server, tag, pages, clients)

        return run

    return {
        "GET /healthz, 1 client": probe,
        "POST /hook, 1 client": hook(1),
        "POST /hook, 16 clients": hook(16),
        "PUT page, 1 client": put(1),
        "PUT page, 8 clients": put(8),
    }


def summarise(figures: dict[tuple[str, str], list[float]], names: list[str], width: int) -> None:
    """Median and least CPU per request over the rounds; the least is what load inflates least."""
    print(f"CPU per request over the rounds, each to {names[0]}'s:")
    for label in dict.fromkeys(label for label, _ in figures):
        first = figures[(label, names[0])]
        for name in names:
            cpu = figures[(label, name)]
            print(
                f"  {label:<23} {name:<{width}} median {statistics.median(cpu):6.0f} µs "
                f"({statistics.median(cpu) / statistics.median(first):4.2f}x)  "
                f"least {min(cpu):6.0f} µs ({min(cpu) / min(first):4.2f}x)"
            )


def baseline(spec: str) -> tuple[str, Path]:
    name, sep, source = spec.partition("=")
    if not sep or not Path(source).is_dir():
        raise argparse.ArgumentTypeError(f"{spec!r} is not NAME=SRC_DIR")
    return name, Path(source)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=baseline, action="append", required=True)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=2000, help="requests per /healthz, /hook")
    parser.add_argument("--pages", type=int, default=400, help="pages per PUT case")
    parser.add_argument("--bare", action="store_true", help="each tree's HTTP layer alone")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp)
        trees: list[tuple[str, Path | None]] = [*args.baseline, ("this tree", None)]
        servers: dict[str, Any] = {}
        for name, source in trees:
            if args.bare:
                servers[name] = stack.enter_context(BareServer(source))
            else:
                servers[name] = start(stack, root, name.replace(" ", "-"), source)
                asyncio.run(warm_up(servers[name].port, servers[name].token))
                asyncio.run(put_pages(servers[name], "warm", 20, 1))
        runs = bare_cases(args.events) if args.bare else cases(args.events, args.pages)
        width = max(map(len, servers))
        figures: dict[tuple[str, str], list[float]] = {}
        for round_no in range(args.rounds):
            for case, (label, run) in enumerate(runs.items()):
                for name, server in servers.items():
                    assert server.process is not None
                    cpu = server_cpu_ms(server.process.pid)
                    seconds, count = asyncio.run(run(server, f"r{round_no}c{case}"))
                    cpu = server_cpu_ms(server.process.pid) - cpu
                    per_request = cpu * 1000 / max(count, 1)
                    figures.setdefault((label, name), []).append(per_request)
                    print(
                        f"round {round_no + 1}  {label:<23} {name:<{width}} "
                        f"{count / seconds:7.0f} req/s  {per_request:7.0f} µs CPU/req"
                        f"  (load {os.getloadavg()[0]:.2f})",
                        flush=True,
                    )
        summarise(figures, list(servers), width)


if __name__ == "__main__":
    main()
