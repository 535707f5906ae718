"""Write and reindex throughput of the wiki + index core, and the CLI's start-up.

Prints pages/s through ``Wiki.write_page`` (in process) and through the HTTP API
at 1,000 and 10,000 pages of 300 words, with 1 and 8 concurrent writers, the
in-process reindex rate and the database size; then ``ai-memory reindex`` as a
whole process (start-up included) over 1,000 and 10,000 hand-written notes of
~336 words (100,000 too with ``--100k``) with the database size against the
corpus; then the start-up of simple commands beside ``python -c pass``.

    python benchmarks/bench_store.py [--sizes 1000 10000] [--reindex-sizes 1000 10000]
        [--100k] [--reindex-only]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.wiki.reindex import reconcile
from benchmarks.common import dir_size, fresh_data_dir, words
from benchmarks.http_writes import bench_http, http_line
from benchmarks.reindex_run import (
    corpus_bytes,
    index_bytes,
    notes,
    reindex_run,
    startup_rows,
    wiki_of,
)

SCOPE = Scope.of(None, "bench")


def corpus(count: int) -> list[tuple[str, str]]:
    rng = random.Random(count)
    return [
        (
            f"notes/n{i}.md",
            f"# Note {i}\n\n{words(rng, 300)}\n\nSee [[notes/n{(i + 7) % count}.md]]\n",
        )
        for i in range(count)
    ]


def run_parallel(pages: list[tuple[str, str]], workers: int, write) -> float:  # type: ignore[no-untyped-def]
    chunks = [pages[i::workers] for i in range(workers)]
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(lambda chunk: [write(p, b) for p, b in chunk], chunks))
    return len(pages) / (time.perf_counter() - start)


def bench_wiki(root: Path, pages: list[tuple[str, str]], workers: int) -> tuple[float, float, Path]:
    """Pages a second, and the writer thread's CPU milliseconds a page (the serial part)."""
    data_dir = fresh_data_dir(root, f"wiki-{len(pages)}-{workers}")
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        cpu = runtime.writer.thread_cpu_s
        rate = run_parallel(pages, workers, lambda p, b: runtime.wiki.write_page(SCOPE.page(p), b))
        cpu_ms = (runtime.writer.thread_cpu_s - cpu) * 1000 / len(pages)
    finally:
        runtime.stop()
    return rate, cpu_ms, data_dir


def bench_reindex(data_dir: Path) -> tuple[float, int]:
    runtime = Runtime.start(Config.load(data_dir, {}), reconcile_wiki=False)
    try:
        start = time.perf_counter()
        report = reconcile(runtime.wiki, full=True)
        elapsed = time.perf_counter() - start
    finally:
        runtime.stop()
    return report.files / elapsed, report.files


def bench_startup(data_dir: Path) -> float:
    """Seconds from start to serving-ready, including the check of every file against the index."""
    start = time.perf_counter()
    runtime = Runtime.start(Config.load(data_dir, {}))
    elapsed = time.perf_counter() - start
    runtime.stop()
    return elapsed


def bench_reindex_process(root: Path, size: int) -> Path:
    """``ai-memory reindex`` of a fresh wiki of ``size`` notes; then once more, unchanged."""
    corpus, _ = notes(size)
    data_dir = wiki_of(root, f"notes-{size}", corpus)
    for label in ("new", "again"):
        load = os.getloadavg()[0]
        wall, cpu = reindex_run(data_dir, size)
        print(
            f"reindex, whole process {size:>7} notes ({label + ')':<6}    : {wall:8.2f} s "
            f"= {size / wall:6.0f} notes/s, CPU {cpu:.2f} s = {cpu / size * 1000:.2f} ms "
            f"a note (load {load:.1f})"
        )
    corpus_mb, db_mb = corpus_bytes(data_dir) / 1e6, index_bytes(data_dir) / 1e6
    print(
        f"database size          {size:>7} notes           : {db_mb:8.2f} MB for "
        f"{corpus_mb:.2f} MB of notes = {db_mb / corpus_mb:.2f}x the corpus"
    )
    return data_dir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--reindex-sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--100k", dest="hundred_k", action="store_true", help="reindex 100,000")
    parser.add_argument("--reindex-only", action="store_true", help="skip the write benchmarks")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for size in [] if args.reindex_only else args.sizes:
            bench_writes(root, size)
        sizes = [*args.reindex_sizes, *([100_000] if args.hundred_k else [])]
        data_dir = None
        for size in sizes:
            data_dir = bench_reindex_process(root, size)
        if data_dir is not None:
            load = os.getloadavg()[0]
            for name, ms in startup_rows(data_dir):
                print(f"start-up {name:<30}: {ms:8.1f} ms (load {load:.1f})")


def bench_writes(root: Path, size: int) -> None:
    pages = corpus(size)
    for workers in (1, 8):
        load = os.getloadavg()[0]
        rate, cpu_ms, data_dir = bench_wiki(root, pages, workers)
        print(
            f"Wiki.write_page  {size:>6} pages  {workers} writer(s): {rate:8.0f} pages/s   "
            f"writer thread CPU {cpu_ms:.2f} ms/page   (load {load:.1f})"
        )
    for workers in (1, 8):
        print(http_line(size, workers, bench_http(root, pages, workers)))
    startup = bench_startup(data_dir)
    print(f"startup check    {size:>6} pages             : {startup:8.2f} s")
    reindex_rate, files = bench_reindex(data_dir)
    db = Config.load(data_dir, {}).db_path
    db_bytes = sum(p.stat().st_size for p in db.parent.iterdir())
    print(f"reindex          {files:>6} pages             : {reindex_rate:8.0f} pages/s")
    print(
        f"database size    {size:>6} pages             : {db_bytes / 1e6:8.1f} MB "
        f"(wiki {dir_size(data_dir / 'wiki') / 1e6:.1f} MB incl. git)"
    )


if __name__ == "__main__":
    main()
