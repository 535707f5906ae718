from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from ai_memory.core.errors import Conflict, Saturated, SchemaTooNew, Unavailable
from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import SCHEMA_VERSION, migrate
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer


def insert(value: str):  # type: ignore[no-untyped-def]
    def command(conn: sqlite3.Connection) -> int:
        cursor = conn.execute(
            "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', ?, '{}')",
            (value,),
        )
        return int(cursor.lastrowid or 0)

    return command


def fail(conn: sqlite3.Connection) -> None:
    conn.execute("INSERT INTO audit_log(at, actor, action, detail) VALUES ('t','x','bad','{}')")
    raise ValueError("boom")


def count(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM audit_log").fetchone()[0])
    finally:
        conn.close()


def test_group_commit_isolates_a_failing_command(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    writer = Writer(db)
    writer.start()
    gate = threading.Event()
    blocker = writer.submit(lambda conn: gate.wait(5))
    futures = [writer.submit(insert(f"a{i}")) for i in range(50)]
    bad = writer.submit(fail)
    futures += [writer.submit(insert(f"b{i}")) for i in range(50)]
    gate.set()
    assert blocker.result() is True
    ids = [f.result() for f in futures]
    with pytest.raises(ValueError, match="boom"):
        bad.result()
    writer.stop()
    assert len(set(ids)) == 100
    assert count(db) == 100  # the failing command's own insert was rolled back
    assert writer.transactions < writer.commands  # several commands shared a transaction


def test_full_queue_refuses_instead_of_waiting(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite", queue_size=16)
    writer.start()
    gate = threading.Event()
    first = writer.submit(lambda conn: gate.wait(5))
    accepted = []
    with pytest.raises(Saturated):
        for i in range(100):
            accepted.append(writer.submit(insert(str(i))))
    gate.set()
    first.result()
    for future in accepted:
        future.result()
    writer.stop()
    assert count(tmp_path / "m.sqlite") == len(accepted)


def test_stop_drains_accepted_commands_then_refuses(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    futures = [writer.submit(insert(str(i))) for i in range(200)]
    writer.stop()
    assert all(f.done() and f.exception() is None for f in futures)
    with pytest.raises(Unavailable):
        writer.submit(insert("late"))
    assert count(tmp_path / "m.sqlite") == 200


def test_readers_cannot_write(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    pool = ReaderPool(tmp_path / "m.sqlite", 2)
    with pytest.raises(sqlite3.OperationalError):
        pool.read(
            lambda conn: conn.execute(
                "INSERT INTO audit_log(at, actor, action) VALUES ('t','x','y')"
            )
        )
    assert pool.read(lambda conn: conn.execute("PRAGMA journal_mode").fetchone()[0]) == "wal"
    pool.close()
    writer.stop()


def test_database_newer_than_the_code_refuses_to_open(tmp_path: Path) -> None:
    conn = connect_writer(tmp_path / "m.sqlite")
    migrate(conn)
    conn.execute("INSERT INTO schema_migrations VALUES (?, 'later')", (SCHEMA_VERSION + 1,))
    with pytest.raises(SchemaTooNew, match="upgrade ai-memory"):
        migrate(conn)
    conn.close()


def test_a_cancelled_command_is_dropped_and_the_writer_lives_on(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    gate = threading.Event()
    blocker = writer.submit(lambda conn: gate.wait(5))
    doomed = writer.submit(insert("cancelled"))
    kept = writer.submit(insert("kept"))
    assert doomed.cancel()
    gate.set()
    blocker.result()
    assert kept.result(timeout=10) > 0
    assert writer.call(insert("after"), timeout=10) > 0
    writer.stop()
    assert count(tmp_path / "m.sqlite") == 2


def test_a_file_that_cannot_be_written_fails_only_its_own_command(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    (tmp_path / "wiki" / "folder.md").mkdir(parents=True)

    def stage(name: str):  # type: ignore[no-untyped-def]
        def command(conn: sqlite3.Connection) -> int:
            writer.files.write(tmp_path / "wiki" / name, b"text")
            return insert(name)(conn)  # type: ignore[no-any-return]

        return command

    gate = threading.Event()
    blocker = writer.submit(lambda conn: gate.wait(5))
    good = writer.submit(stage("good.md"))
    bad = writer.submit(stage("folder.md"))
    gate.set()
    blocker.result()
    assert good.result(timeout=10) > 0
    with pytest.raises(Conflict, match="folder"):
        bad.result(timeout=10)
    writer.stop()
    assert (tmp_path / "wiki/good.md").read_bytes() == b"text"
    assert count(tmp_path / "m.sqlite") == 1
    assert not [p for p in (tmp_path / "wiki").iterdir() if p.name.startswith(".tmp-")]


def test_migrations_carry_indexed_text_into_the_contentless_indexes(tmp_path: Path) -> None:
    from ai_memory.store.migrations import MIGRATIONS, _statements

    conn = connect_writer(tmp_path / "m.sqlite")
    conn.execute("CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT)")
    for number, script in enumerate(MIGRATIONS[:4], start=1):
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, 'then')", (number,))
    conn.execute("INSERT INTO workspaces VALUES ('default', 't')")
    conn.execute("INSERT INTO projects (workspace, name, created_at) VALUES ('default', 'p', 't')")
    conn.execute(
        "INSERT INTO pages (id, workspace, project, path, version, title, kind, tier, body, "
        "content_hash, created_at) VALUES (7, 'default', 'p', 'a.md', 1, 'Walrus facts', "
        "'note', 'semantic', 'tusks and whiskers.', 'h', 't')"
    )
    conn.execute("INSERT INTO pages_fts(rowid, title, body) VALUES (7, 'Walrus facts', 'x')")
    conn.execute(
        "INSERT INTO observations (id, workspace, project, session_id, agent, kind, tool_name, "
        "body, created_at) VALUES (9, 'default', 'p', 's', 'a', 'post-tool-use', 'Grep', "
        "'found narwhal', 't')"
    )
    migrate(conn)
    match = "SELECT rowid FROM {0} WHERE {0} MATCH ?"
    assert [tuple(r) for r in conn.execute(match.format("pages_fts"), ("whiskers",))] == [(7,)]
    observations = conn.execute(match.format("observations_fts"), ("grep narwhal",))
    assert [tuple(r) for r in observations] == [(9,)]
    conn.close()
