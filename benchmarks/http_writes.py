"""HTTP page writes: PUTs from keep-alive clients, the server measured alone.

The clients are asyncio connections (``benchmarks/keepalive.py``), not httpx in
threads, so on a 2-core machine the figure is the server's, not the client's.
Beside the rate it prints the server's CPU per page (user + system time of the
server process over the timed writes, which means more than wall time on a shared
machine) and how many pages the writer's group commit put in one transaction.

``--threads`` also prints each server thread's CPU per page, read from
``/proc/<pid>/task`` once the follow-up work of the last write (the watcher's
look at the files, the git checkpoint) is done: what a page write sets off beside
the writer. Threads are named by ``py-spy dump`` when it is installed (Python does
not name its threads for the OS), else by their OS name. ``--healthz`` has another
client ask ``GET /healthz`` every 5 ms meanwhile and prints its p50 and p99: what
a write answered on the event loop makes the server's other clients wait.

    python benchmarks/http_writes.py --pages 1000 --clients 1 8 --threads \\
        --baseline before=/tmp/before/src

runs each client count on the present code and on each ``--baseline`` tree (a
copy of ``src`` from another commit, put first on the server's ``PYTHONPATH``),
alternating, each run on a fresh data dir.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Server, fresh_data_dir
from benchmarks.keepalive import Connection

# What issue 15 asks of HTTP page writes, printed beside each figure.
HTTP_TARGETS = {1: 500, 8: 1500}
SETTLE_S = 1.5  # the watcher's debounce and one git checkpoint interval, with room


@dataclass(frozen=True, slots=True)
class HttpWrites:
    rate: float  # acknowledged pages per second
    cpu_ms: float  # server CPU per page
    per_transaction: float  # pages per writer transaction
    threads: dict[str, float] = field(default_factory=dict)  # CPU ms per page, by thread
    healthz_ms: tuple[float, float] | None = None  # p50, p99 of /healthz during the writes


def bench_http(
    root: Path,
    pages: list[tuple[str, str]],
    workers: int,
    *,
    threads: bool = False,
    healthz: bool = False,
) -> HttpWrites:
    """PUT every page, ``workers`` clients at once; ``healthz``: probe the server's
    answers to another client meanwhile."""
    data_dir = fresh_data_dir(root, f"http-{len(pages)}-{workers}-{time.monotonic_ns()}")
    with Server(data_dir) as server:
        return asyncio.run(_put_all(server, pages, workers, threads, healthz))


async def _probe(server: Server, done: asyncio.Event) -> tuple[float, float]:
    """``GET /healthz`` every 5 ms until ``done``: the p50 and p99 of its answers, in ms
    (what a page write run on the event loop makes another client wait)."""
    conn = Connection(server.port, server.token)
    times: list[float] = []
    while not done.is_set():
        started = time.perf_counter()
        status, _ = await conn.request("GET", "/healthz", b"")
        times.append((time.perf_counter() - started) * 1000)
        if status != 200:
            raise RuntimeError(f"GET /healthz: {status}")
        await asyncio.sleep(0.005)
    conn.close()
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, len(times) * 99 // 100)]


async def _put_all(
    server: Server,
    pages: list[tuple[str, str]],
    workers: int,
    threads: bool = False,
    healthz: bool = False,
) -> HttpWrites:
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
    if threads:
        await asyncio.sleep(SETTLE_S)  # the warm-up write's checkpoint and watcher look
    before = await _writer_counts(warm)
    assert server.process is not None
    pid = server.process.pid
    cpu, tasks = _cpu_seconds(pid), _task_ticks(pid)
    chunks = [pages[i::workers] for i in range(workers)]
    done = asyncio.Event()
    probe = asyncio.ensure_future(_probe(server, done)) if healthz else None
    start = time.perf_counter()
    await asyncio.gather(*(client(chunk) for chunk in chunks))
    elapsed = time.perf_counter() - start
    done.set()
    probed = await probe if probe is not None else None
    cpu = _cpu_seconds(pid) - cpu
    after = await _writer_counts(warm)
    by_thread: dict[str, float] = {}
    if threads:
        await asyncio.sleep(SETTLE_S)
        by_thread = _per_thread(pid, tasks, _task_ticks(pid), len(pages))
    warm.close()
    transactions = max(1, after[0] - before[0])
    return HttpWrites(
        len(pages) / elapsed,
        cpu * 1000 / len(pages),
        (after[1] - before[1]) / transactions,
        by_thread,
        probed,
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


def _task_ticks(pid: int) -> dict[str, int]:
    """User + system clock ticks of each thread of ``pid`` so far, by thread id."""
    ticks: dict[str, int] = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
            ticks[tid] = int(fields[11]) + int(fields[12])
    return ticks


def _thread_names(pid: int) -> dict[str, str]:
    """Thread id -> the Python thread's name where ``py-spy dump`` tells it, else the OS's."""
    names: dict[str, str] = {}
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if Path(spy).exists():
        dump = subprocess.run([spy, "dump", "-p", str(pid)], capture_output=True, text=True)
        names = dict(re.findall(r'Thread (\d+) \([^)]*\): "([^"]*)"', dump.stdout))
    for tid in os.listdir(f"/proc/{pid}/task"):
        if tid not in names:
            with contextlib.suppress(OSError):
                names[tid] = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
    return names


def _per_thread(
    pid: int, before: dict[str, int], after: dict[str, int], pages: int
) -> dict[str, float]:
    """CPU ms per page of each thread (numbered pool threads summed under one name)."""
    names = _thread_names(pid)
    ticks: collections.Counter[str] = collections.Counter()
    for tid, now in after.items():
        name = re.sub(r"_\d+$", "", names.get(tid, "?"))
        ticks[name] += now - before.get(tid, 0)
    per_tick_ms = 1000 / os.sysconf("SC_CLK_TCK") / pages
    return {name: n * per_tick_ms for name, n in ticks.most_common() if n}


def http_line(size: int, workers: int, result: HttpWrites) -> str:
    line = (
        f"HTTP PUT         {size:>6} pages  {workers} writer(s): {result.rate:8.0f} pages/s"
        f"   server CPU {result.cpu_ms:.2f} ms/page, {result.per_transaction:.1f} pages/transaction"
        f"   target >= {HTTP_TARGETS[workers]:,}   (load {os.getloadavg()[0]:.1f})"
    )
    if result.healthz_ms is not None:
        p50, p99 = result.healthz_ms
        line += f"\n    /healthz meanwhile: p50 {p50:.2f} ms, p99 {p99:.2f} ms"
    if result.threads:
        shown = ", ".join(f"{name} {ms:.3f}" for name, ms in result.threads.items())
        line += f"\n    CPU ms a page by thread: {shown}"
    return line


@contextlib.contextmanager
def _source(tree: str | None) -> Iterator[None]:
    """Servers started inside run the sources of ``tree`` (None: this checkout's)."""
    saved = os.environ.get("PYTHONPATH")
    if tree is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [tree, saved]))
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def main() -> None:
    from benchmarks.bench_store import corpus

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--clients", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--threads", action="store_true", help="CPU a page of each thread")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--healthz", action="store_true", help="another client's /healthz times meanwhile"
    )
    parser.add_argument(
        "--baseline", action="append", default=[], metavar="NAME=SRC", help="another tree"
    )
    args = parser.parse_args()
    trees: list[tuple[str, str | None]] = [("present", None)]
    trees += [(name, path) for name, _, path in (b.partition("=") for b in args.baseline)]
    pages = corpus(args.pages)
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.rounds):
            for workers in args.clients:
                for name, tree in trees:
                    with _source(tree):
                        result = bench_http(
                            Path(tmp), pages, workers, threads=args.threads, healthz=args.healthz
                        )
                    print(f"[{name}] {http_line(args.pages, workers, result)}", flush=True)


if __name__ == "__main__":
    main()
