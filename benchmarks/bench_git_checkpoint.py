"""A git checkpoint of one changed page in a large folder, with and without the object check.

    python benchmarks/bench_git_checkpoint.py [--pages 2000 8000] [--checkpoints 20]

A fresh wiki gets N pages in one folder, committed 20 at a time through the
checkpointer (loose objects, as a server writing now and then leaves them). Then
one page at a time changes and is checkpointed, and the CPU time of each checkpoint
is taken: once with libgit2's strict object creation on (its default: writing a tree
reads the header of every blob it names) and once as the checkpointer runs (off while
it writes the tree, after checking the blobs it wrote).
Both runs happen on the same wiki, alternated, so load drifts alike.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path

from ai_memory.wiki import git
from ai_memory.wiki.git import GitCheckpointer, init_repository

STEP = 20  # pages per checkpoint while the folder is filled


def filled_wiki(root: Path, pages: int) -> GitCheckpointer:
    init_repository(root, "bench", "bench@example.invalid")
    checkpointer = GitCheckpointer(
        root, interval=3600, author="bench", email="bench@example.invalid"
    )
    folder = root / "notes"
    folder.mkdir()
    for start in range(0, pages, STEP):
        for i in range(start, min(pages, start + STEP)):
            (folder / f"n{i}.md").write_text(f"# Note {i}\n\n" + "word " * 300)
            checkpointer.notify(f"notes/n{i}.md")
        checkpointer.flush()
    return checkpointer


def checkpoint_cpu_ms(checkpointer: GitCheckpointer, page: int, *, strict: bool) -> float:
    """CPU ms of the checkpoint of one changed page; ``strict`` leaves the check on for
    this checkpoint alone (the checkpointer turns it off around writing the tree)."""
    path = checkpointer.root / "notes" / f"n{page}.md"
    path.write_text(f"# Note {page}, changed {time.monotonic_ns()}\n\n" + "word " * 300)
    checkpointer.notify(f"notes/n{page}.md")
    started = time.process_time()
    unchecked = git._unchecked_tree_entries
    if strict:
        git._unchecked_tree_entries = contextlib.nullcontext  # type: ignore[assignment]
    try:
        checkpointer.flush()
    finally:
        git._unchecked_tree_entries = unchecked
    return (time.process_time() - started) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, nargs="+", default=[2000, 8000])
    parser.add_argument("--checkpoints", type=int, default=20)
    args = parser.parse_args()
    for pages in args.pages:
        with tempfile.TemporaryDirectory() as tmp:
            checkpointer = filled_wiki(Path(tmp) / "wiki", pages)
            strict: list[float] = []
            lenient: list[float] = []
            for n in range(args.checkpoints):
                strict.append(checkpoint_cpu_ms(checkpointer, 2 * n, strict=True))
                lenient.append(checkpoint_cpu_ms(checkpointer, 2 * n + 1, strict=False))
            s, n = statistics.median(strict), statistics.median(lenient)
            print(
                f"{pages:>7} pages in one folder: checkpoint of one page, CPU p50 "
                f"{s:6.1f} ms with the object check, {n:6.1f} ms without: {s / n:.1f}x"
                f"   (load {os.getloadavg()[0]:.1f})"
            )


if __name__ == "__main__":
    main()
