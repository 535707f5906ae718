"""Forget sweep and lint over a large wiki: time, and the writer's longest hold of the lock.

    python benchmarks/bench_sweep.py [--pages 100000] [--projects 10]

A fresh data dir gets N pages of ~80 words across P projects, written through
the writer in large batches (index rows exactly as a page write makes them; no
markdown files, which the sweep and lint never read): 60% episodic session
pages, the rest curated pages linking to each other (some links dangle). Pages
are aged uniformly over 0-200 days, 1% carry an expiry in the past, a few are
read recently, and 1% are tombstones older than the purge limit. Then it times
a dry run, the sweep itself (which must do what the dry run said) and a lint of
every project, and prints the writer's longest BEGIN-to-COMMIT during each
(the sweep works in bounded batches so requests keep being served).

Targets: under 60 s each on 2 cores for 100,000 pages, growing linearly; the
longest hold under 100 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.identity import PageRef, Scope
from ai_memory.maintenance.init import initialise
from ai_memory.maintenance.lint import lint
from ai_memory.maintenance.sweep import Sweeper
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.wiki.document import build_document, complete_frontmatter

BATCH = 1000
NOW = datetime(2026, 6, 1, tzinfo=UTC)
WORDS = [f"w{i}" for i in range(5000)]


def corpus(n: int, projects: int, rng: random.Random) -> list[tuple[PageRef, str, dict[str, Any]]]:
    out = []
    per = max(n // projects, 1)
    for i in range(n):
        scope = Scope.of(None, f"p{i % projects}")
        j = i // projects
        folder = "sessions" if rng.random() < 0.6 else rng.choice(["concepts", "notes"])
        words = " ".join(rng.choices(WORDS, k=80))
        links = " ".join(f"[[notes/n{rng.randrange(per)}.md]]" for _ in range(2))
        meta: dict[str, Any] = {}
        if rng.random() < 0.01:
            meta["expires_at"] = iso(NOW - timedelta(days=1))
        path = f"{folder}/{'s' if folder == 'sessions' else 'n'}{j}.md"
        out.append((scope.page(path), f"# Page {i}\n\n{words}\n\nSee {links}.\n", meta))
    return out


def load(runtime: Runtime, docs: list[tuple[PageRef, str, dict[str, Any]]]) -> None:
    now = iso(NOW)
    for folder in {runtime.wiki.file_path(ref).parent for ref, _, _ in docs}:
        folder.mkdir(parents=True, exist_ok=True)  # no files, but the folders a removal syncs
    for start in range(0, len(docs), BATCH):
        built = [
            (ref, build_document(ref, complete_frontmatter(ref, meta, body), body))
            for ref, body, meta in docs[start : start + BATCH]
        ]

        def command(conn: sqlite3.Connection, built: list[Any] = built) -> None:
            for ref, doc in built:
                pages.ensure_project(conn, ref.scope, now)
                pages.insert_version(conn, ref, doc, now=now, actor="bench")

        runtime.writer.call(command, timeout=None)


def age(runtime: Runtime, rng: random.Random) -> None:
    """Spread creation over 200 days, read a few pages lately, leave old tombstones."""
    ids = runtime.readers.read(
        lambda c: [r[0] for r in c.execute("SELECT id FROM pages WHERE is_latest = 1")]
    )
    ages = [(iso(NOW - timedelta(days=rng.uniform(0, 200))), pid) for pid in ids]
    reads = [(iso(NOW - timedelta(days=1)), pid) for pid in rng.sample(ids, len(ids) // 20)]
    gone = rng.sample(ids, len(ids) // 100)
    tombstone = iso(NOW - timedelta(days=200))
    for start in range(0, len(ids), 5000):

        def command(conn: sqlite3.Connection, start: int = start) -> None:
            conn.executemany(
                "UPDATE pages SET created_at = ? WHERE id = ?", ages[start : start + 5000]
            )
            conn.executemany(
                "UPDATE pages SET access_count = 3, last_access_at = ? WHERE id = ?",
                reads[start // 20 : (start + 5000) // 20],
            )
            for pid in gone[start // 100 : (start + 5000) // 100]:
                pages.mark_deleted(conn, pid, tombstone)

        runtime.writer.call(command, timeout=None)


def timed(runtime: Runtime, label: str, work: Any) -> Any:
    """Run one phase; print its time, the writer's longest hold, its transactions and the
    machine's load (on a shared machine a hold is mostly time spent waiting for a CPU)."""
    runtime.writer.longest_hold_s = 0.0
    transactions = runtime.writer.transactions
    began = time.perf_counter()
    result = work()
    elapsed = time.perf_counter() - began
    hold = runtime.writer.longest_hold_s * 1000
    count = runtime.writer.transactions - transactions
    print(
        f"{label:<10} {elapsed:8.2f} s   longest writer hold {hold:7.1f} ms   "
        f"{count} transactions   load average {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--projects", type=int, default=10)
    args = parser.parse_args(argv)
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        initialise(Config.load(root, {}))
        runtime = Runtime.start(Config.load(root, {}), embed=False)
        runtime.wiki.clock = lambda: iso(NOW)
        try:
            began = time.perf_counter()
            load(runtime, corpus(args.pages, args.projects, rng))
            age(runtime, rng)
            print(
                f"{args.pages} pages in {args.projects} projects loaded in "
                f"{time.perf_counter() - began:.1f} s",
                flush=True,
            )
            sweeper = Sweeper(runtime.wiki, runtime.config)
            dry = timed(runtime, "dry run", lambda: sweeper.sweep(dry_run=True))
            done = timed(runtime, "sweep", sweeper.sweep)
            counts = done.to_dict()["counts"]
            same = dry.to_dict()["counts"] == counts
            print(f"           {counts}; as the dry run said: {same}")
            reports = timed(runtime, "lint", lambda: lint(runtime.wiki, runtime.config, None))
            findings = sum(len(r["findings"]) for r in reports)
            print(f"           {findings} findings in {len(reports)} projects")
        finally:
            runtime.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
