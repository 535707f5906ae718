"""What project access costs a search: the operator against a user with a project hidden.

    python benchmarks/bench_access.py [--projects 40] [--pages 100] [--queries 200]

A fresh data dir gets ``--projects`` projects of ``--pages`` pages each (written
through the writer, index rows as a page write makes them), one of them
restricted. The same queries then run through the one search entry point three
ways, each interleaved with the others so load drifts alike: as the operator
(no access read at all), as a user who may read every project but the
restricted one (``global=true`` becomes the list of the readable projects),
and both again for one project. It prints p50/p95 per way, the ratios to the
operator's and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.store.acting import act_as, restore
from ai_memory.wiki.document import build_document, complete_frontmatter

SYLLABLES = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "van", "zen", "qu", "bor"]
USER = Principal(7, "bench-user", False)


def vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < size:
        words.setdefault("".join(rng.choices(SYLLABLES, k=rng.randint(2, 4))), None)
    return list(words)


def seed(runtime: Runtime, projects: int, per: int, words: list[str], rng: random.Random) -> None:
    now = now_iso()
    for number in range(projects):
        scope = Scope.of(None, f"p{number}")
        docs = []
        for i in range(per):
            ref = scope.page(f"notes/n{i}.md")
            body = " ".join(rng.choices(words, k=120))
            docs.append((ref, build_document(ref, complete_frontmatter(ref, {}, body), body)))

        def command(conn: sqlite3.Connection, scope: Scope = scope, docs: list[Any] = docs) -> None:
            pages.ensure_project(conn, scope, now)
            for ref, doc in docs:
                pages.insert_version(conn, ref, doc, now=now, actor="bench")

        runtime.writer.call(command, timeout=None)
    hide = "UPDATE projects SET visibility = 'restricted' WHERE name = 'p0'"
    runtime.writer.call(lambda conn: conn.execute(hide), timeout=None)


def timed(runtime: Runtime, who: Principal, request: SearchRequest) -> float:
    token = act_as(who)
    try:
        started = time.perf_counter()
        runtime.retrieval.search_sync(request, defer=True)
        return (time.perf_counter() - started) * 1000
    finally:
        restore(token)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--projects", type=int, default=40)
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(16)
    words = vocabulary(rng)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        initialise(Config.load(root, {}))
        runtime = Runtime.start(Config.load(root, {}))
        try:
            seed(runtime, args.projects, args.pages, words, rng)
            texts = [
                " ".join(rng.sample(words[:2000], k=rng.randint(2, 3))) for _ in range(args.queries)
            ]
            ways = {
                "global, operator": (Principal.root(), {"global": True}),
                "global, user": (USER, {"global": True}),
                "project, operator": (Principal.root(), {"project": "p1"}),
                "project, user": (USER, {"project": "p1"}),
            }
            figures: dict[str, list[float]] = {name: [] for name in ways}
            for text in texts * 2:  # the first round warms the caches; both are kept
                for name, (who, where) in ways.items():
                    request = SearchRequest.parse({"query": text, **where})
                    figures[name].append(timed(runtime, who, request))
        finally:
            runtime.stop()
    print(f"{args.projects} projects x {args.pages} pages, {args.queries} queries x 2")
    for name, values in figures.items():
        values.sort()
        p50 = statistics.median(values)
        p95 = values[int(len(values) * 0.95) - 1]
        base = statistics.median(figures[name.split(",")[0] + ", operator"])
        print(
            f"{name:18} p50 {p50:7.3f} ms  p95 {p95:7.3f} ms  x{p50 / base:.2f} of the operator's"
        )
    print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))


if __name__ == "__main__":
    main()
