"""/hook and /hook/batch, this checkout against a baseline source tree, alternated in one run.

A shared machine moves wall-clock figures twofold from one minute to the next, so
both servers run side by side and take turns, round after round; each figure is
printed with the server's own CPU time per event (every thread, from /proc), which
the load moves far less, and with the load average at that moment.

    git archive HEAD src | tar -x -C /tmp/baseline
    python benchmarks/bench_ingest_ab.py --baseline /tmp/baseline/src [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_hooks import (
    batch_posts,
    single_posts,
    stored_count,
    thread_cpu_ms,
    warm_up,
)
from benchmarks.bench_web import server_cpu_ms
from benchmarks.common import Server, fresh_data_dir

_INIT = (
    "import sys; from pathlib import Path; from ai_memory.config import Config; "
    "from ai_memory.maintenance.init import initialise; "
    "initialise(Config.load(Path(sys.argv[1]), {}))"
)
Run = Callable[[Server, str], Awaitable[tuple[float, int]]]


def start(stack: ExitStack, root: Path, name: str, source: Path | None) -> Server:
    """A server from ``source`` (a ``src`` directory) or, without one, from this checkout."""
    if source is None:
        return stack.enter_context(Server(fresh_data_dir(root, name)))
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = str(source)
    try:
        # Initialised by the baseline itself: this tree may know newer migrations.
        subprocess.run([sys.executable, "-c", _INIT, str(root / name)], check=True)
        return stack.enter_context(Server(root / name))
    finally:
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def cases(events: int, batches: int) -> dict[str, tuple[Run, int]]:
    def single(clients: int) -> Run:
        async def run(server: Server, tag: str) -> tuple[float, int]:
            seconds, _, acked = await single_posts(server.port, server.token, clients, events, tag)
            return seconds, acked

        return run

    async def batch(server: Server, tag: str) -> tuple[float, int]:
        return await batch_posts(server.port, server.token, 1, batches, tag)

    return {
        "/hook, 1 client": (single(1), 1500),
        "/hook, 16 clients": (single(16), 3000),
        "/hook/batch, 1 client": (batch, 20000),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--baseline", type=Path, required=True, help="the baseline's src/")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--events", type=int, default=1600)
    parser.add_argument("--batches", type=int, default=40)
    parser.add_argument(
        "--only", default="", help="run only the cases whose label holds this text, e.g. '1 client'"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as stack:
        root = Path(tmp)
        servers = {
            "baseline": start(stack, root, "old", args.baseline),
            "this tree": start(stack, root, "new", None),
        }
        acked = dict.fromkeys(servers, 0)
        for server in servers.values():
            asyncio.run(warm_up(server.port, server.token))
        for round_no in range(args.rounds):
            for case, (label, (run, target)) in enumerate(cases(args.events, args.batches).items()):
                if args.only not in label:
                    continue
                for name, server in servers.items():
                    assert server.process is not None
                    cpu = server_cpu_ms(server.process.pid)
                    loop, rest = thread_cpu_ms(server.process.pid)
                    seconds, count = asyncio.run(run(server, f"r{round_no}c{case}"))
                    cpu = server_cpu_ms(server.process.pid) - cpu
                    loop_end, rest_end = thread_cpu_ms(server.process.pid)
                    acked[name] += count
                    load = os.getloadavg()[0]
                    print(
                        f"round {round_no + 1}  {label:<22} {name:<10} "
                        f"{count / seconds:8.0f} events/s  {cpu * 1000 / count:7.1f} µs CPU/event"
                        f" (loop {(loop_end - loop) * 1000 / count:5.1f}, other threads "
                        f"{(rest_end - rest) * 1000 / count:5.1f})"
                        f"  (target >= {target:,}; load {load:.2f})",
                        flush=True,
                    )
        for name, server in servers.items():
            stored = stored_count(server.data_dir)
            verdict = "all stored" if stored == acked[name] else "MISMATCH"
            print(f"{name}: acknowledged {acked[name]}, stored {stored}: {verdict}")


if __name__ == "__main__":
    main()
