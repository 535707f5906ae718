"""Indexing and search side by side with basic-memory, on the same notes and queries.

    python benchmarks/bench_vs_basic_memory.py --basic-memory <venv>/bin/python \\
        [--size 1000] [--queries 200] [--runs 3] [--add-only]

Both get the same deterministic markdown notes (``bench_query.py``'s corpus:
~336 words, frontmatter with entities, links) and the same queries.

* Indexing, each as a whole process, start-up included: ``ai-memory reindex`` of
  a fresh data dir whose wiki holds the notes (median of ``--runs`` before
  and ``--runs`` after basic-memory's, so both sides see the same load), against
  each of basic-memory's two ways timed alone: ``basic-memory project add``
  (which indexes the new notes before it returns) and then ``basic-memory
  reindex --full --search`` (which indexes them all again; ``--add-only`` skips
  it). The ratio against the goal is taken against the faster of the two; the
  CPU time (user + system) of each side is printed beside it.
* Search: ``GET /api/v1/search`` of a real ``ai-memory serve``, once it is idle,
  timed by a bare keep-alive client (the server's latency, the verdict) and by
  httpx, and basic-memory's MCP ``search_notes`` (keyword mode) over stdio timed by
  the MCP client it depends on (``side_by_side.py``).

basic-memory runs in its own venv (Python 3.12); to make one:

    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/bmvenv
    /tmp/bmvenv/bin/pip install basic-memory==0.24.1

``--ours-only`` measures ai-memory alone (basic-memory takes minutes per 1,000 notes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import side_by_side
from benchmarks.reindex_run import Corpus, notes, reindex_run, wiki_of

INDEX_TARGET = 200  # times basic-memory's notes/s
SEARCH_TARGET = 20  # times faster at p50

MAKE_VENV = """basic-memory needs its own venv (Python 3.12); make it with:

    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/bmvenv
    /tmp/bmvenv/bin/pip install basic-memory==0.24.1

then run: python benchmarks/bench_vs_basic_memory.py --basic-memory /tmp/bmvenv/bin/python
(or --ours-only to measure ai-memory alone)"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--basic-memory", metavar="PYTHON", help="the python of its venv")
    parser.add_argument("--size", type=int, default=1000, help="notes (default 1000)")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument(
        "--runs", type=int, default=3, help="ai-memory reindex runs on each side of basic-memory's"
    )
    parser.add_argument("--ours-only", action="store_true")
    parser.add_argument(
        "--add-only",
        action="store_true",
        help="time basic-memory's project add alone, without its full reindex after",
    )
    args = parser.parse_args(argv)
    python = args.basic_memory
    if not args.ours_only and (python is None or not Path(python).exists()):
        print(MAKE_VENV, file=sys.stderr)
        return 2
    corpus, texts = notes(args.size, args.queries)
    print(f"## {args.size:,} notes, {len(texts)} queries (load {load()})")
    with tempfile.TemporaryDirectory(prefix="bench-vs-bm-") as tmp:
        root = Path(tmp)
        runs = ours_runs(root, corpus, args.runs, "before")
        ours_search = side_by_side.ours(root, corpus, texts)
        if args.ours_only:
            ours_summary(runs, args.size)
            return 0
        theirs = side_by_side.basic_memory_figures(python, root, corpus, texts, args.add_only)
        runs += ours_runs(root, corpus, args.runs, "after")  # either side of theirs: same load
    ours_s, ours_cpu = ours_summary(runs, args.size)
    steps = {"project add (indexes the new notes)": "add"}
    if "full_reindex_s" in theirs:
        steps["reindex --full (indexes them again)"] = "full_reindex"
    walls = []
    for step, key in steps.items():
        wall, cpu = float(theirs[f"{key}_s"]), float(theirs[f"{key}_cpu_s"])
        walls.append(wall)
        print(
            f"basic-memory {step}, whole process: {wall:.1f} s = {args.size / wall:,.1f} "
            f"notes/s = {wall / ours_s:,.0f}x ai-memory's time; CPU {cpu:.1f} s = "
            f"{cpu / ours_cpu:,.0f}x ai-memory's CPU"
        )
    print(
        f"basic-memory MCP search_notes (text): p50 {theirs['p50_ms']:.1f} ms, "
        f"p95 {theirs['p95_ms']:.1f} ms (load {load()})"
    )
    # The faster of basic-memory's two ways to index: the ratio it is hardest to meet.
    index_ratio = min(walls) / ours_s
    search_ratio = float(theirs["p50_ms"]) / ours_search.direct
    through_httpx = float(theirs["p50_ms"]) / ours_search.httpx
    print(
        f"indexing: ai-memory is {index_ratio:,.0f}x faster than basic-memory's faster step "
        f"(target >= {INDEX_TARGET}x: {verdict(index_ratio, INDEX_TARGET)})"
    )
    print(
        f"search p50: ai-memory is {search_ratio:.1f}x faster, timed by a keep-alive client "
        f"(target >= {SEARCH_TARGET}x: {verdict(search_ratio, SEARCH_TARGET)}); "
        f"{through_httpx:.1f}x timed by httpx"
    )
    return 0


def ours_runs(root: Path, corpus: Corpus, count: int, tag: str) -> list[tuple[float, float]]:
    """``count`` runs of ``ai-memory reindex`` (wall, CPU), each on a new wiki."""
    return [
        reindex_run(wiki_of(root, f"ours-{tag}-{i}", corpus), len(corpus)) for i in range(count)
    ]


def ours_summary(runs: list[tuple[float, float]], size: int) -> tuple[float, float]:
    """Print ai-memory's indexing figures; its median wall and CPU time."""
    wall = statistics.median(w for w, _ in runs)
    cpu = statistics.median(c for _, c in runs)
    shown = ", ".join(f"{w:.2f}" for w, _ in runs)
    print(
        f"ai-memory reindex of a new wiki (whole process): {wall:.2f} s = "
        f"{size / wall:,.0f} notes/s, CPU {cpu:.2f} s (median of {len(runs)} runs: "
        f"{shown} s; load {load()})"
    )
    return wall, cpu


def load() -> str:
    return f"{os.getloadavg()[0]:.1f}"


def verdict(ratio: float, target: float) -> str:
    return "met" if ratio >= target else "not met"


if __name__ == "__main__":
    sys.exit(main())
