"""Renaming a project: the dry run, the rename, the writer's hold of the lock, then a reindex.

    python benchmarks/bench_rename.py [--pages 2000] [--linking 200]

A fresh data dir gets N pages (real markdown files, written through
``Wiki.write_command`` in batches) in project ``p0``, and L pages in ``p1`` that
each link into ``p0`` as ``[[p0:…]]``. It times a dry run and the rename of
``p0`` to ``renamed`` (one writer transaction: every row re-keyed, every file
staged at its new place, the L linking pages rewritten), prints the writer's
longest BEGIN-to-COMMIT, then runs ``reindex`` and prints what it changed
(which must be nothing).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.hygiene.projects import rename_project
from ai_memory.maintenance.init import initialise
from ai_memory.maintenance.reindex import reindex
from ai_memory.runtime import Runtime

BATCH = 200


def populate(runtime: Runtime, pages: int, linking: int) -> None:
    wiki = runtime.wiki
    src, other = Scope("default", "p0"), Scope("default", "p1")
    writes = [
        (
            src.page(f"notes/n{i}.md"),
            f"Note {i} about topic t{i % 97}; see [[notes/n{(i + 1) % pages}.md]].",
        )
        for i in range(pages)
    ]
    writes += [
        (other.page(f"refs/r{i}.md"), f"Reference {i} points at [[p0:notes/n{i % pages}.md]].")
        for i in range(linking)
    ]
    for start in range(0, len(writes), BATCH):
        commands = [wiki.write_command(ref, body) for ref, body in writes[start : start + BATCH]]

        def batch(conn: sqlite3.Connection, commands: list = commands) -> None:  # type: ignore[type-arg]
            for command in commands:
                command(conn)

        runtime.writer.call(batch, timeout=None)
    runtime.checkpointer.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--linking", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        config = Config.load(root, {})
        initialise(config)
        runtime = Runtime.start(config, embed=False, search=False)
        try:
            started = time.perf_counter()
            populate(runtime, args.pages, args.linking)
            written = time.perf_counter() - started
            print(f"wrote {args.pages} + {args.linking} pages in {written:.2f} s")
            scope = Scope("default", "p0")
            started = time.perf_counter()
            dry = rename_project(runtime, scope, "renamed", dry_run=True)
            dry_s = time.perf_counter() - started
            runtime.writer.longest_hold_s = 0.0
            started = time.perf_counter()
            real = rename_project(runtime, scope, "renamed")
            real_s = time.perf_counter() - started
            hold = runtime.writer.longest_hold_s
        finally:
            runtime.stop()
        assert {**dry.to_json(), "dry_run": False} == real.to_json()
        print(f"dry run: {dry_s:.2f} s; rename: {real_s:.2f} s (git checkpoint included)")
        print(
            f"rows moved: {real.total_rows}; files: {len(real.files)}; "
            f"pages relinked: {len(real.details['relinked'])}"
        )
        print(f"writer's longest hold during the rename: {hold * 1000:.0f} ms")
        started = time.perf_counter()
        report = reindex(config)
        reindex_s = time.perf_counter() - started
        print(
            f"reindex of the same wiki: {reindex_s:.2f} s (rename / reindex: "
            f"{real_s / reindex_s:.2f})"
        )
        print(
            f"reindex after: {report.added} added, {report.updated} updated, "
            f"{report.deleted} removed, {report.unchanged} unchanged"
        )


if __name__ == "__main__":
    main()
