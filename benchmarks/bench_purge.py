"""Purging a session and a project: how long each takes and holds the writer's lock.

    python benchmarks/bench_purge.py [--pages 2000] [--sessions 200] [--events 50]

A fresh data dir gets N pages in ``p0`` and as many in ``p1`` (real files written
through ``Wiki.write_command``), and S sessions of E observations each in ``p0`` with
their session pages. It times a session purge (secure deletion, the full-text indexes
rewritten, the WAL truncated, the git checkpoint), then a purge of ``p0``, printing the
writer's longest BEGIN-to-COMMIT for each, then runs ``reindex`` and prints what it
changed (which must be nothing).
"""

from __future__ import annotations

import argparse
import sqlite3
import tempfile
import time
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.hooks.ingest import INSERT_OBSERVATION, INSERT_OBSERVATION_FTS
from ai_memory.hygiene.purge_project import purge_project
from ai_memory.hygiene.sessions import purge_session
from ai_memory.maintenance.init import initialise
from ai_memory.maintenance.reindex import reindex
from ai_memory.runtime import Runtime

BATCH = 200
NOW = "2026-01-01T00:00:00Z"
SESSION = """
INSERT INTO sessions (workspace, project, session_id, agent, started_at, last_event_at, ended_at)
VALUES ('default', 'p0', ?, 'bench', ?, ?, ?)
"""


def populate(runtime: Runtime, pages: int, sessions: int, events: int) -> None:
    wiki = runtime.wiki
    writes = [
        (Scope("default", p).page(f"notes/n{i}.md"), f"Note {i} about topic t{i % 97}.")
        for p in ("p0", "p1")
        for i in range(pages)
    ]
    writes += [
        (Scope("default", "p0").page(f"sessions/s{i}.md"), f"# Session {i}\n\nDid w{i}.")
        for i in range(sessions)
    ]
    for start in range(0, len(writes), BATCH):
        commands = [wiki.write_command(ref, body) for ref, body in writes[start : start + BATCH]]

        def batch(conn: sqlite3.Connection, commands: list = commands) -> None:  # type: ignore[type-arg]
            for command in commands:
                command(conn)

        runtime.writer.call(batch, timeout=None)

    def capture(conn: sqlite3.Connection) -> None:
        for s in range(sessions):
            conn.execute(SESSION, (f"s{s}", NOW, NOW, NOW))
            for e in range(events):
                row = ("default", "p0", f"s{s}", "bench", "user-prompt", f"s{s}-{e}", None)
                body = f"prompt {e} of session {s} about w{s} and topic t{e % 97}"
                cursor = conn.execute(INSERT_OBSERVATION, (*row, body, "{}", NOW))
                conn.execute(INSERT_OBSERVATION_FTS, (cursor.lastrowid, body))

    runtime.writer.call(capture, timeout=None)
    runtime.checkpointer.flush()


def timed(runtime: Runtime, run: object) -> tuple[float, float]:
    runtime.writer.longest_hold_s = 0.0
    started = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - started, runtime.writer.longest_hold_s


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--events", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config.load(Path(tmp) / "data", {})
        initialise(config)
        runtime = Runtime.start(config, embed=False, search=False)
        try:
            populate(runtime, args.pages, args.sessions, args.events)
            print(
                f"{2 * args.pages} pages, {args.sessions} sessions of {args.events} events "
                f"({args.sessions * args.events} observations)"
            )
            session_s, session_hold = timed(runtime, lambda: purge_session(runtime, "s0"))
            project_s, project_hold = timed(
                runtime, lambda: purge_project(runtime, Scope("default", "p0"))
            )
        finally:
            runtime.stop()
        print(
            f"purge-session: {session_s:.2f} s, writer's longest hold {session_hold * 1000:.0f} ms"
        )
        print(
            f"purge-project: {project_s:.2f} s, writer's longest hold {project_hold * 1000:.0f} ms"
        )
        started = time.perf_counter()
        report = reindex(config)
        reindex_s = time.perf_counter() - started
        print(
            f"reindex of what is left ({report.files} files): {reindex_s:.2f} s "
            f"(purge-project / reindex: {project_s / reindex_s:.2f})"
        )
        print(
            f"reindex after: {report.added} added, {report.updated} updated, "
            f"{report.deleted} removed, {report.unchanged} unchanged"
        )


if __name__ == "__main__":
    main()
