"""Write and reindex throughput of the wiki + index core.

Prints pages/s through ``Wiki.write_page`` (in process) and through the HTTP API
at 1,000 and 10,000 pages of 300 words, with 1 and 8 concurrent writers,
reindex pages/s, and the database size.

    python benchmarks/bench_store.py [--sizes 1000 10000]
"""

from __future__ import annotations

import argparse
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


def bench_wiki(root: Path, pages: list[tuple[str, str]], workers: int) -> tuple[float, Path]:
    data_dir = fresh_data_dir(root, f"wiki-{len(pages)}-{workers}")
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        rate = run_parallel(pages, workers, lambda p, b: runtime.wiki.write_page(SCOPE.page(p), b))
    finally:
        runtime.stop()
    return rate, data_dir


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for size in args.sizes:
            pages = corpus(size)
            for workers in (1, 8):
                rate, data_dir = bench_wiki(root, pages, workers)
                print(f"Wiki.write_page  {size:>6} pages  {workers} writer(s): {rate:8.0f} pages/s")
            for workers in (1, 8):
                rate = bench_http(root, pages, workers)
                print(http_line(size, workers, rate))
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
