"""Index upkeep around maintenance: merging in steps, free pages given back, no WAL left."""

from __future__ import annotations

import gc
import sqlite3
import weakref
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.identity import Scope
from ai_memory.maintenance.lint import lint
from ai_memory.maintenance.sweep import Sweeper
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime
from ai_memory.store.db import connect_reader

API = Scope.of(None, "api")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


def automerge(runtime: Runtime) -> str | None:
    row = runtime.readers.read(
        lambda c: c.execute("SELECT v FROM pages_fts_config WHERE k = 'automerge'").fetchone()
    )
    return None if row is None else str(row[0])


def write_many(runtime: Runtime, n: int) -> None:
    for i in range(n):
        body = f"# Note {i}\n\nepisode {i} about the refund queue and retry budget w{i}\n"
        runtime.wiki.write_page(API.page(f"sessions/s{i}.md"), body, {"tier": "episodic"})


def hits(runtime: Runtime, query: str) -> list[str]:
    request = SearchRequest.parse({"query": query, "workspace": "default", "project": "api"})
    return [hit.path for hit in runtime.retrieval.search_sync(request).hits]


def test_a_new_database_gives_pages_freed_by_a_sweep_back(data_dir: Path) -> None:
    runtime = Runtime.start(Config.load(data_dir, {}))
    clock = [T0]
    runtime.wiki.clock = lambda: iso(clock[0])
    try:
        assert runtime.readers.read(lambda c: c.execute("PRAGMA auto_vacuum").fetchone()[0]) == 2
        write_many(runtime, 60)
        clock[0] = T0 + timedelta(days=400)
        report = Sweeper(runtime.wiki, runtime.config).sweep()
        assert len(report.evicted) == 60
        free = runtime.readers.read(lambda c: c.execute("PRAGMA freelist_count").fetchone()[0])
        assert free == 0
        # Automatic merging is back as it was, and search still answers from the index.
        assert automerge(runtime) == "4"
        assert hits(runtime, "refund") == []
    finally:
        runtime.stop()


def test_a_sweep_left_unfinished_does_not_leave_merging_off(data_dir: Path) -> None:
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        write_many(runtime, 3)
        runtime.writer.call(
            lambda c: c.execute("INSERT INTO pages_fts(pages_fts, rank) VALUES ('automerge', 0)")
        )
        lint(runtime.wiki, runtime.config, API)
        assert automerge(runtime) == "4"
        assert set(hits(runtime, "refund")) == {f"sessions/s{i}.md" for i in range(3)}
    finally:
        runtime.stop()


def test_a_stopped_runtime_leaves_no_wal_behind(data_dir: Path) -> None:
    runtime = Runtime.start(Config.load(data_dir, {}))
    reader = runtime.readers
    write_many(runtime, 5)
    assert reader.read(lambda c: c.execute("SELECT count(*) FROM pages").fetchone()[0]) == 5
    runtime.stop()
    db = Config.load(data_dir, {}).db_path
    assert not db.with_name(db.name + "-wal").exists()
    conn: sqlite3.Connection = connect_reader(db)
    try:
        assert conn.execute("SELECT count(*) FROM pages").fetchone()[0] == 5
    finally:
        conn.close()


def test_the_writer_keeps_nothing_a_finished_command_held(data_dir: Path) -> None:
    """A command may close over a lot (the start-up check's set of every page)."""
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:

        class Held:
            pass

        held = Held()
        probe = weakref.ref(held)

        def command(conn: sqlite3.Connection, held: Held = held) -> int:
            return 1

        assert runtime.writer.call(command) == 1
        del held, command
        gc.collect()
        assert probe() is None
    finally:
        runtime.stop()
