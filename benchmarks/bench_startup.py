"""Server start-up: CPU and wall time from spawn to its first answers, and to every route.

    python benchmarks/bench_startup.py [--sizes 0 10000] [--starts 5] [--before OLD/src]

For each size, that many notes (the corpus of ``bench_footprint.py``) are written into a
fresh data dir and indexed once by ``ai-memory reindex``; then ``ai-memory serve`` is
started ``--starts`` times on it (no vectors, no LLM) and timed from spawn until
``/healthz`` answers, with the CPU (user + system) the server used to get there, which
the load of a shared machine inflates much less than wall time; then, asked one after
the other at once, until ``/api/v1/status`` answers (authenticated, counted from the
index: the start-up figure), until ``/admin/status`` answers (its router is among those
built once the server answers, so every route is in), and until ``/mcp`` answers a
ping (the endpoint is built on a thread once the server answers), which is what a
test server costs before its first test runs.

The server runs from bytecode, as an installed package does (pip compiles it when it
installs): the sources are compiled into a cache folder of the run's own on an
uncounted first start of each side, whatever ``PYTHONDONTWRITEBYTECODE`` says.

``--before`` names the ``src`` folder of another release (``git archive <rev> src``), and
``--now`` the one to time against it (default: the installed package):
each side indexes its own copy and the starts alternate between them in one run, so
the ratio holds under any load. Target (issue 15): start-up <= 1 s at 10,000 pages.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_footprint import corpus, cpu_seconds, wiki_folder
from benchmarks.common import free_port, fresh_data_dir
from benchmarks.side_by_side import write_notes

PING = {"jsonrpc": "2.0", "id": 0, "method": "ping"}


@dataclass
class Start:
    healthy_s: float
    healthy_cpu_s: float
    api_s: float
    api_cpu_s: float
    routed_s: float
    mcp_s: float
    mcp_cpu_s: float


def side_env(src: Path | None, cache: Path | None = None) -> dict[str, str]:
    """The side's sources, and its own bytecode cache when ``cache`` is given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
    if src is not None:
        env["PYTHONPATH"] = str(src)
    if cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def prepared(root: Path, name: str, n: int, src: Path | None) -> Path:
    data_dir = fresh_data_dir(root, name)
    write_notes(wiki_folder(data_dir), corpus(n))
    command = [sys.executable, "-m", "ai_memory", "reindex", "--data-dir", str(data_dir)]
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, env=side_env(src))
    return data_dir


def start_once(data_dir: Path, src: Path | None, cache: Path | None = None) -> Start:
    url = f"http://127.0.0.1:{free_port()}"
    token = (data_dir / "auth-tokens" / "default").read_text().strip()
    command = [sys.executable, "-m", "ai_memory", "serve", "--data-dir", str(data_dir)]
    began = time.perf_counter()
    process = subprocess.Popen(
        [*command, "--bind", url.removeprefix("http://")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=side_env(src, cache),
    )
    try:
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=url, timeout=60, headers=headers) as client:
            healthy_s = wait_healthy(client) - began
            healthy_cpu_s = cpu_seconds(process.pid)
            client.get("/api/v1/status").raise_for_status()
            api_s, api_cpu_s = time.perf_counter() - began, cpu_seconds(process.pid)
            client.get("/admin/status").raise_for_status()
            routed_s = time.perf_counter() - began
            accept = {"Accept": "application/json, text/event-stream"}
            client.post("/mcp", json=PING, headers=accept).raise_for_status()
            mcp_s = time.perf_counter() - began
            return Start(
                healthy_s,
                healthy_cpu_s,
                api_s,
                api_cpu_s,
                routed_s,
                mcp_s,
                cpu_seconds(process.pid),
            )
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)


def wait_healthy(client: httpx.Client) -> float:
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            if client.get("/healthz").status_code == 200:
                return time.perf_counter()
        except httpx.TransportError:
            pass
        time.sleep(0.01)
    raise RuntimeError("/healthz never answered")


def report(label: str, starts: list[Start]) -> None:
    def fig(values: list[float]) -> str:
        return f"median {statistics.median(values):.2f} s ({', '.join(f'{v:.2f}' for v in values)})"

    pad = " " * len(label)
    print(f"  {label}: CPU to /healthz {fig([s.healthy_cpu_s for s in starts])}", flush=True)
    print(f"  {pad}  wall to /healthz {fig([s.healthy_s for s in starts])}")
    print(f"  {pad}  CPU to /api/v1/status {fig([s.api_cpu_s for s in starts])}")
    print(f"  {pad}  wall to /api/v1/status {fig([s.api_s for s in starts])}")
    print(f"  {pad}  wall to every route (/admin/status) {fig([s.routed_s for s in starts])}")
    print(f"  {pad}  CPU to /mcp built {fig([s.mcp_cpu_s for s in starts])}")
    print(f"  {pad}  wall to /mcp built {fig([s.mcp_s for s in starts])}")
    api = statistics.median(s.api_s for s in starts)
    verdict = "ok" if api <= 1.0 else "not met"
    print(f"  {pad}  goal: /api/v1/status answered <= 1 s after spawn: {verdict} ({api:.2f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="*", default=[0, 10_000])
    parser.add_argument("--starts", type=int, default=5)
    parser.add_argument("--before", type=Path, help="src folder of the release to compare")
    parser.add_argument("--now", type=Path, help="src folder to time (default: the installed)")
    args = parser.parse_args(argv)
    now = args.now.resolve() if args.now else None
    sides: dict[str, Path | None] = {"now": now}
    if args.before:
        sides = {"before": args.before.resolve(), "now": now}
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        for n in args.sizes:
            dirs = {name: prepared(Path(tmp), f"{name}-{n}", n, src) for name, src in sides.items()}
            caches = {name: Path(tmp) / f"bytecode-{name}" for name in sides}
            for name, src in sides.items():  # compiles the sources into the side's cache
                start_once(dirs[name], src, caches[name])
            timed: dict[str, list[Start]] = {name: [] for name in sides}
            for _ in range(args.starts):
                for name, src in sides.items():
                    timed[name].append(start_once(dirs[name], src, caches[name]))
            print(f"{n:,} pages, {args.starts} starts each (load {os.getloadavg()[0]:.1f}):")
            for name in sides:
                report(name, timed[name])
    return 0


if __name__ == "__main__":
    sys.exit(main())
