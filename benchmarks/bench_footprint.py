"""Footprint of a running server: database size against the corpus, start-up time, RSS.

    python benchmarks/bench_footprint.py [--notes 1000] [--sizes 10000 100000] \\
        [--starts 1] [--keep DIR]

Database size: N markdown notes of ~320 words (the synthetic corpus of
bench_query.py, frontmatter with a title and entities) are put in a fresh wiki
and indexed by a real ``ai-memory serve`` at its start; the database files
(``memory.sqlite`` with its ``-wal`` and ``-shm``) are measured while it serves
and after it stops, against the bytes of the markdown files.

Start-up and RSS: for each size, the notes are indexed once (``ai-memory
reindex``, whole process), then ``ai-memory serve`` is started on the indexed
wiki (no vectors configured, ``--starts`` times) and timed from spawn until
``/healthz`` answers (with the CPU time the server used to get there, which load
on a shared machine inflates less than wall time) and until ``/api/v1/status``
does (the runtime is up: wiki reconciled); its
resident set (VmRSS, and the peak VmHWM) is read from /proc after start, once
every route and the MCP endpoint are built (``/admin/status`` and an MCP ping
answered: what the server holds from then on), after 50 searches, and after a
burst of 200 page writes over HTTP (``PUT``, one client; the same 200 paths on
every run, so a kept data dir grows by 200 pages once), and 3 s later, once their
git checkpoint is done (a checkpoint holds git's index of every page while it runs).

``--keep DIR`` keeps each size's indexed data dir under DIR and reuses it on the
next run (building 100,000 pages takes minutes); without it everything lives in
a temporary directory.

Targets (issue 15): database <= 2.5x the corpus at 1,000 notes; start-up <= 1 s
at 10,000 pages; RSS <= 150 MB at 100,000 pages without vectors.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_query import page_texts, vocabulary
from benchmarks.common import free_port, fresh_data_dir
from benchmarks.side_by_side import write_notes

PROJECT = "bench"
WRITES = 200  # pages PUT after the searches
SETTLE_S = 3.0  # then a wait longer than the git checkpoint interval (1 s)


def corpus(n: int) -> list[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(n)
    words, weights = vocabulary(rng)
    return page_texts(n, words, weights, rng)


def wiki_folder(data_dir: Path) -> Path:
    return data_dir / "wiki" / "default" / PROJECT


def db_bytes(data_dir: Path) -> int:
    db = data_dir / "db" / "memory.sqlite"
    return sum(
        p.stat().st_size
        for p in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm"))
        if p.exists()
    )


def env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}


def memory_kb(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process, in kB."""
    fields = dict(
        line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines()
    )
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process (all its threads) so far: robust to load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Serving:
    """``ai-memory serve`` as a subprocess, timed from spawn to its first answers."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.url = f"http://127.0.0.1:{free_port()}"
        token = (data_dir / "auth-tokens" / "default").read_text().strip()
        self.headers = {"Authorization": f"Bearer {token}"}
        self.healthy_s = self.ready_s = self.cpu_s = 0.0
        self.client = httpx.Client(base_url=self.url, headers=self.headers, timeout=60)

    def __enter__(self) -> Serving:
        bind = self.url.removeprefix("http://")
        command = [sys.executable, "-m", "ai_memory", "serve", "--data-dir", str(self.data_dir)]
        began = time.perf_counter()
        self.process = subprocess.Popen(
            [*command, "--bind", bind],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env(),
        )
        self.healthy_s = self._wait("/healthz") - began
        self.cpu_s = cpu_seconds(self.process.pid)
        self.ready_s = self._wait("/api/v1/status") - began
        return self

    def _wait(self, route: str) -> float:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited ({self.process.returncode}) before {route}")
            try:
                answer = self.client.get(route, timeout=5)
                if answer.status_code == 200:
                    return time.perf_counter()
            except httpx.TransportError:
                pass
            time.sleep(0.01)
        raise RuntimeError(f"{route} never answered")

    def built(self) -> None:
        """Return once the routes and the MCP endpoint built after the first answer are in."""
        self.client.get("/admin/status").raise_for_status()
        ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
        accept = {"Accept": "application/json, text/event-stream"}
        self.client.post("/mcp", json=ping, headers=accept).raise_for_status()

    def search(self, texts: list[str]) -> None:
        for text in texts:
            params = {"q": text, "project": PROJECT, "limit": 10}
            self.client.get("/api/v1/search", params=params).raise_for_status()

    def write(self, bodies: list[str]) -> None:
        """PUT one page per body under ``footprint-writes/`` (the same paths every run,
        a new text each time, so every PUT writes a version)."""
        run = time.time_ns()
        for i, body in enumerate(bodies):
            target = f"/api/v1/projects/default/{PROJECT}/pages/footprint-writes/w{i}.md"
            self.client.put(target, json={"body": f"{body}\nrun {run}\n"}).raise_for_status()

    def __exit__(self, *exc: object) -> None:
        self.client.close()
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=300)


def database_ratio(root: Path, n: int) -> None:
    notes = corpus(n)
    data_dir = fresh_data_dir(root, f"size-{n}")
    write_notes(wiki_folder(data_dir), notes)
    corpus_bytes = sum(f.stat().st_size for f in wiki_folder(data_dir).rglob("*.md"))
    with Serving(data_dir) as server:
        server.search([body.split()[5] for _, body, _ in notes[:20]])
        serving = db_bytes(data_dir)
    stopped = db_bytes(data_dir)
    print(
        f"database at {n:,} notes ({corpus_bytes / 1e6:.2f} MB of markdown): "
        f"{serving / 1e6:.2f} MB serving ({serving / corpus_bytes:.2f}x), "
        f"{stopped / 1e6:.2f} MB stopped ({stopped / corpus_bytes:.2f}x)",
        flush=True,
    )


def indexed_data_dir(root: Path, n: int, notes: list[tuple[str, str, dict[str, Any]]]) -> Path:
    """``root/serve-N`` with the notes indexed: built once (``ai-memory reindex``), then
    reused as long as its marker says the build finished."""
    data_dir = root / f"serve-{n}"
    marker = data_dir / ".bench-footprint-indexed"
    if marker.exists():
        print(f"{n:,} pages: reusing {data_dir}", flush=True)
        return data_dir
    if data_dir.exists():
        shutil.rmtree(data_dir)  # a build cut short: start again
    fresh_data_dir(root, data_dir.name)
    write_notes(wiki_folder(data_dir), notes)
    began = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ai_memory", "reindex", "--data-dir", str(data_dir)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=env(),
    )
    marker.touch()
    print(f"{n:,} pages indexed in {time.perf_counter() - began:.1f} s", flush=True)
    return data_dir


def start_and_rss(root: Path, n: int, starts: int = 1) -> None:
    notes = corpus(n)
    data_dir = indexed_data_dir(root, n, notes)
    texts = [" ".join(body.split()[5:8]) for _, body, _ in notes[:50]]
    bodies = [body for _, body, _ in notes[:WRITES]]
    for start in range(1, starts + 1):  # the first start after a reindex may do more
        with Serving(data_dir) as server:
            started_rss, started_peak = memory_kb(server.process.pid)
            server.built()
            built_rss, _ = memory_kb(server.process.pid)
            server.search(texts)
            rss, peak = memory_kb(server.process.pid)
            server.write(bodies)
            written_rss, written_peak = memory_kb(server.process.pid)
            time.sleep(SETTLE_S)  # the last git checkpoint of the writes is done by then
            settled_rss, _ = memory_kb(server.process.pid)
        print(
            f"  start {start}: {server.healthy_s:.2f} s to /healthz ({server.cpu_s:.2f} s CPU), "
            f"{server.ready_s:.2f} s to /api/v1/status; RSS {started_rss / 1024:.0f} MB "
            f"after start (peak {started_peak / 1024:.0f} MB), {built_rss / 1024:.0f} MB with "
            f"every route and MCP built, {rss / 1024:.0f} MB after 50 searches (peak "
            f"{peak / 1024:.0f} MB), {written_rss / 1024:.0f} MB after {WRITES} page writes "
            f"(peak {written_peak / 1024:.0f} MB), {settled_rss / 1024:.0f} MB {SETTLE_S:.0f} s "
            f"later; database {db_bytes(data_dir) / 1e6:.1f} MB "
            f"(load {os.getloadavg()[0]:.1f})",
            flush=True,
        )
        if n >= 100_000:
            worst = max(rss, settled_rss)
            verdict = "ok" if worst <= 150 * 1024 else "not met"
            print(
                f"  goal: RSS <= 150 MB at 100,000 pages after the searches and once the "
                f"writes are checkpointed ({worst / 1024:.0f} MB): {verdict}"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=1000)
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 100_000])
    parser.add_argument("--starts", type=int, default=1, help="server starts per size")
    parser.add_argument("--keep", type=Path, help="keep and reuse indexed data dirs here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-footprint-") as tmp:
        if args.notes:
            database_ratio(Path(tmp), args.notes)
        kept = args.keep or Path(tmp)
        kept.mkdir(parents=True, exist_ok=True)
        for n in args.sizes:
            start_and_rss(kept, n, args.starts)
    return 0


if __name__ == "__main__":
    sys.exit(main())
