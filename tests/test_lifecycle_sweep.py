"""The forget sweep with an injected clock, on a real data dir (SQLite, wiki, git)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.identity import Scope
from ai_memory.core.text import fts_text
from ai_memory.maintenance.restore import checkpoints, restore_page
from ai_memory.maintenance.sweep import Sweeper
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime

API = Scope.of(None, "api")
T0 = datetime(2026, 1, 1, tzinfo=UTC)


class Clock:
    """The time every part of the runtime reads; tests move it forward."""

    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> str:
        return iso(self.now)

    def advance(self, days: float) -> None:
        self.now += timedelta(days=days)


@pytest.fixture
def aged(data_dir: Path) -> Iterator[tuple[Runtime, Clock]]:
    env = {"AI_MEMORY_MAINTENANCE__OBSERVATION_RETENTION_DAYS": "30"}
    runtime = Runtime.start(Config.load(data_dir, env))
    clock = Clock()
    runtime.wiki.clock = clock
    runtime.retrieval.reinforcer.clock = clock
    try:
        yield runtime, clock
    finally:
        runtime.stop()


def hits(runtime: Runtime, query: str) -> list[str]:
    request = SearchRequest.parse({"query": query, "workspace": "default", "project": "api"})
    response = runtime.retrieval.search_sync(request)
    runtime.writer.call(lambda conn: None)  # the reinforcement queued before this has landed
    return [hit.path for hit in response.hits]


def add_session(runtime: Runtime, session_id: str, at: str, n: int) -> None:
    """A finished session with ``n`` raw observations, as capture leaves it."""

    def command(conn: sqlite3.Connection) -> None:
        conn.execute(
            "INSERT INTO sessions (workspace, project, session_id, agent, started_at, "
            "last_event_at, ended_at) VALUES ('default', 'api', ?, 'claude-code', ?, ?, ?)",
            (session_id, at, at, at),
        )
        for i in range(n):
            body = f"observation {i} of {session_id} about zebrafish"
            cursor = conn.execute(
                "INSERT INTO observations (workspace, project, session_id, agent, kind, body, "
                "created_at) VALUES ('default', 'api', ?, 'claude-code', 'user-prompt', ?, ?)",
                (session_id, body, at),
            )
            conn.execute(
                "INSERT INTO observations_fts(rowid, body) VALUES (?, ?)",
                (cursor.lastrowid, fts_text(body)),
            )

    runtime.writer.call(command)


def observation_count(runtime: Runtime, session_id: str) -> int:
    sql = "SELECT count(*) FROM observations WHERE session_id = ?"
    return int(runtime.readers.read(lambda conn: conn.execute(sql, (session_id,)).fetchone()[0]))


def audit_actions(runtime: Runtime) -> list[tuple[str, str]]:
    sql = "SELECT action, coalesce(path, '') FROM audit_log WHERE actor = 'maintenance'"
    return runtime.readers.read(lambda conn: [tuple(r) for r in conn.execute(sql)])


def test_pages_age_and_the_sweep_forgets_reversibly(aged: tuple[Runtime, Clock]) -> None:
    runtime, clock = aged
    wiki = runtime.wiki
    wiki.write_page(API.page("sessions/old.md"), "# Old\n\nwe tuned the quokka cache\n")
    wiki.write_page(API.page("sessions/used.md"), "# Used\n\nthe wombat migration steps\n")
    wiki.write_page(API.page("decisions/keep.md"), "# Keep\n\nalways use the platypus\n")
    wiki.write_page(
        API.page("notes/brief.md"),
        "# Brief\n\npinned but temporary\n",
        {"pinned": True, "expires_at": iso(T0 + timedelta(days=10))},
    )
    runtime.checkpointer.flush()
    add_session(runtime, "s-live", iso(T0), 3)
    add_session(runtime, "s-pageless", iso(T0), 2)
    add_session(runtime, "s-evicted", iso(T0), 1)
    wiki.write_page(API.page("sessions/s-evicted.md"), "# Session s-evicted\n\nsummary\n")
    clock.advance(80)
    wiki.write_page(API.page("sessions/s-live.md"), "# Session s-live\n\nits summary\n")

    clock.advance(20)
    assert hits(runtime, "wombat") == ["sessions/used.md"]  # read now: it stays warm
    sweeper = Sweeper(wiki, runtime.config)
    predicted = sweeper.sweep(dry_run=True).to_dict()
    assert observation_count(runtime, "s-live") == 3  # a dry run changes nothing
    done = sweeper.sweep().to_dict()
    assert predicted.pop("dry_run") and not done.pop("dry_run")
    assert predicted == done
    assert [p["path"] for p in done["expired"]] == ["notes/brief.md"]
    assert {p["path"] for p in done["evicted"]} == {"sessions/old.md", "sessions/s-evicted.md"}
    assert done["counts"]["observations"] == 3

    # The evicted page: no file, a tombstone, gone from search; git still has it.
    old = API.page("sessions/old.md")
    assert not wiki.file_path(old).exists()
    assert wiki.history(old)[0]["deleted_at"] is not None
    assert hits(runtime, "quokka") == []
    assert hits(runtime, "platypus") == ["decisions/keep.md"]
    assert wiki.file_path(API.page("sessions/used.md")).exists()
    runtime.checkpointer.flush()
    revs = checkpoints(wiki, old)
    assert revs[0]["deleted"] and not revs[-1]["deleted"]
    restored = restore_page(wiki, old)
    assert restored["version"] == 2 and wiki.file_path(old).exists()
    assert hits(runtime, "quokka") == ["sessions/old.md"]

    # Observations: pruned only where the session page held them when planned; the
    # pageless session keeps its only copy.
    assert observation_count(runtime, "s-live") == 0
    assert observation_count(runtime, "s-pageless") == 2
    assert observation_count(runtime, "s-evicted") == 1  # its page went in this very sweep
    actions = audit_actions(runtime)
    assert ("evict", "sessions/old.md") in actions and ("expire", "notes/brief.md") in actions
    assert ("prune-observations", "sessions/s-live.md") in actions


def test_purge_removes_history_only_past_the_limit(aged: tuple[Runtime, Clock]) -> None:
    runtime, clock = aged
    wiki = runtime.wiki
    early, late = API.page("notes/early.md"), API.page("notes/late.md")
    other = Scope.of(None, "web").page("notes/early.md")
    for ref in (early, late, other):
        wiki.write_page(ref, "# Note\n\ntext\n")
    wiki.delete_page(early)
    wiki.delete_page(other)
    clock.advance(100)
    wiki.delete_page(late)
    clock.advance(90)  # early's tombstone is 190 days old, late's 90

    sweeper = Sweeper(wiki, runtime.config)
    report = sweeper.sweep(scope=API)
    assert [r.path for r in report.purged] == ["notes/early.md"]
    count = "SELECT count(*) FROM pages WHERE project = ? AND path = ?"

    def versions(ref: object) -> int:
        return int(
            runtime.readers.read(
                lambda conn: conn.execute(count, (ref.project, ref.path)).fetchone()[0]  # type: ignore[attr-defined]
            )
        )

    assert versions(early) == 0 and versions(late) == 1
    assert versions(other) == 1  # another project is outside the swept scope
    # The text is still in git: a purged page can come back from a checkpoint.
    runtime.checkpointer.flush()
    assert restore_page(wiki, early)["version"] == 1


def test_working_pages_end_with_their_session(aged: tuple[Runtime, Clock]) -> None:
    runtime, _ = aged
    for session in ("s-done", "s-open"):
        runtime.wiki.write_page(
            API.page(f"notes/scratch-{session}.md"),
            "# Scratch\n\nhalf a thought\n",
            {"tier": "working", "session_id": session},
        )
    add_session(runtime, "s-done", iso(T0), 1)
    runtime.writer.call(
        lambda conn: conn.execute(
            "INSERT INTO sessions (workspace, project, session_id, agent, started_at, "
            "last_event_at) VALUES ('default', 'api', 's-open', 'codex', ?, ?)",
            (iso(T0), iso(T0)),
        )
    )
    report = Sweeper(runtime.wiki, runtime.config).sweep()
    assert [t.ref.path for t in report.evicted] == ["notes/scratch-s-done.md"]


def test_compaction_keeps_the_searchable_tokens_then_eviction_follows(data_dir: Path) -> None:
    runtime = Runtime.start(Config.load(data_dir, {"AI_MEMORY_MAINTENANCE__COMPACT": "true"}))
    clock = Clock()
    runtime.wiki.clock = clock
    try:
        ref = API.page("sessions/long.md")
        body = (
            "# Long session\n\nWe chased the flaky upload for hours.\n\n"
            "It failed with `ECONNRESET` in src/upload/retry.py, see "
            "https://example.com/issue/42 and E1234; maxRetries and retry_delay_ms "
            "were the knobs. Many more words of prose follow here.\n"
        )
        runtime.wiki.write_page(ref, body)
        clock.advance(100)
        sweeper = Sweeper(runtime.wiki, runtime.config)
        first = sweeper.sweep()
        assert [t.ref.path for t in first.compacted] == ["sessions/long.md"] and not first.evicted
        page = runtime.wiki.read_page(ref)
        assert page["version"] == 2 and "Many more words" not in page["body"]
        for token in (
            "`ECONNRESET`",
            "src/upload/retry.py",
            "https://example.com/issue/42",
            "E1234",
            "maxRetries",
            "retry_delay_ms",
        ):
            assert token in page["body"], token
        assert "We chased the flaky upload" in page["body"]  # the first paragraph
        assert runtime.wiki.read_page(ref, version=1)["body"].endswith("follow here.\n")
        clock.advance(100)
        second = sweeper.sweep()
        assert not second.compacted and [t.ref.path for t in second.evicted] == [ref.path]
    finally:
        runtime.stop()
