"""Indexing and search side by side with basic-memory, on the same notes and queries.

    python benchmarks/bench_vs_basic_memory.py --basic-memory <venv>/bin/python \\
        [--size 1000] [--queries 200] [--runs 3]

Both get the same deterministic markdown notes (``bench_query.py``'s corpus:
~336 words, frontmatter with entities, links) and the same queries.

* Indexing, each as a whole process, start-up included: ``ai-memory reindex`` of
  a fresh data dir whose wiki holds the notes (median of ``--runs``), and
  ``basic-memory reindex`` of the notes registered as a project.
* Search: ``GET /api/v1/search`` of a real ``ai-memory serve`` and basic-memory's
  MCP ``search_notes`` (keyword mode) over stdio (``side_by_side.py``).

basic-memory runs in its own venv (Python 3.12); to make one:

    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/bmvenv
    /tmp/bmvenv/bin/pip install basic-memory==0.24.1

``--ours-only`` measures ai-memory alone (basic-memory takes minutes per 1,000 notes).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks import side_by_side
from benchmarks.reindex_run import notes, reindex_seconds, wiki_of

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
    parser.add_argument("--runs", type=int, default=3, help="ai-memory reindex runs")
    parser.add_argument("--ours-only", action="store_true")
    args = parser.parse_args(argv)
    python = args.basic_memory
    if not args.ours_only and (python is None or not Path(python).exists()):
        print(MAKE_VENV, file=sys.stderr)
        return 2
    corpus, texts = notes(args.size, args.queries)
    print(f"## {args.size:,} notes, {len(texts)} queries")
    with tempfile.TemporaryDirectory(prefix="bench-vs-bm-") as tmp:
        root = Path(tmp)
        runs = [
            reindex_seconds(wiki_of(root, f"ours-{i}", corpus), args.size) for i in range(args.runs)
        ]
        ours_s = statistics.median(runs)
        shown = ", ".join(f"{s:.2f}" for s in runs)
        print(
            f"ai-memory reindex (whole process): {ours_s:.2f} s = "
            f"{args.size / ours_s:,.0f} notes/s (runs: {shown} s)"
        )
        ours_p50 = side_by_side.ours(root, corpus, texts)
        if args.ours_only:
            return 0
        theirs = side_by_side.basic_memory_figures(python, root, corpus, texts)
    theirs_s = float(theirs["index_s"])
    print(
        f"basic-memory project add + reindex (whole processes): {theirs_s:.1f} s = "
        f"{args.size / theirs_s:,.1f} notes/s"
    )
    print(
        f"basic-memory MCP search_notes (text): p50 {theirs['p50_ms']:.1f} ms, "
        f"p95 {theirs['p95_ms']:.1f} ms"
    )
    index_ratio = theirs_s / ours_s
    search_ratio = float(theirs["p50_ms"]) / ours_p50
    print(f"indexing: ai-memory is {index_ratio:,.0f}x faster (target >= {INDEX_TARGET}x)")
    print(f"search p50: ai-memory is {search_ratio:.1f}x faster (target >= {SEARCH_TARGET}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
