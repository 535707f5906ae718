"""A command run in place by its caller while the writer is idle: the same transaction,
the same answers, never a wait for a lock or a queue."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from ai_memory.store.writer import Writer
from ai_memory.web.lone_request import REQUESTS_KEY, lone_request


def insert(value: str):  # type: ignore[no-untyped-def]
    """A command that stores ``value`` and tells which thread ran it."""

    def command(conn: sqlite3.Connection) -> int:
        conn.execute(
            "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', ?, '{}')",
            (value,),
        )
        return threading.get_ident()

    return command


def actions(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [r[0] for r in conn.execute("SELECT action FROM audit_log ORDER BY id")]
    finally:
        conn.close()


@pytest.fixture
def writer(tmp_path: Path):  # type: ignore[no-untyped-def]
    started = Writer(tmp_path / "memory.sqlite")
    started.start()
    yield started
    started.stop()


def test_an_idle_writer_runs_the_command_on_the_calling_thread(writer: Writer) -> None:
    done = writer.run_if_idle(insert("here"))
    assert done is not None and done.done()
    assert done.result() == threading.get_ident()
    assert actions(writer.db_path)[-1] == "here"  # committed: another connection reads it
    assert writer.transactions == 1 and writer.commands == 1
    # The writer thread takes the next queued command as ever.
    assert writer.call(insert("queued")) != threading.get_ident()
    assert actions(writer.db_path)[-2:] == ["here", "queued"]


def test_a_failing_command_fails_its_future_and_commits_nothing(writer: Writer) -> None:
    def fail(conn: sqlite3.Connection) -> None:
        insert("half")(conn)
        raise ValueError("boom")

    done = writer.run_if_idle(fail)
    assert done is not None
    with pytest.raises(ValueError, match="boom"):
        done.result()
    assert "half" not in actions(writer.db_path)
    assert writer.run_if_idle(insert("after")) is not None  # the connection is usable again
    assert actions(writer.db_path)[-1] == "after"


def test_nothing_runs_while_the_writer_thread_is_busy(writer: Writer) -> None:
    gate, began = threading.Event(), threading.Event()

    def hold(conn: sqlite3.Connection) -> None:
        began.set()
        gate.wait(10)

    held = writer.submit(hold)
    assert began.wait(10)
    assert writer.run_if_idle(insert("skipped")) is None
    gate.set()
    held.result(10)
    assert "skipped" not in actions(writer.db_path)


def test_another_connection_holding_the_write_lock_is_not_waited_for(writer: Writer) -> None:
    other = sqlite3.connect(writer.db_path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        assert writer.run_if_idle(insert("locked out")) is None  # at once, not after 10 s
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert writer.run_if_idle(insert("free")) is not None
    # The busy timeout is back for everything else: a queued command waits for a lock.
    timeout = writer.call(lambda conn: conn.execute("PRAGMA busy_timeout").fetchone()[0])
    assert timeout > 0
    assert actions(writer.db_path)[-1:] == ["free"]


def test_a_stopped_writer_runs_nothing(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "memory.sqlite")
    assert writer.run_if_idle(insert("early")) is None  # not started
    writer.start()
    writer.stop()
    assert writer.run_if_idle(insert("late")) is None
    assert actions(tmp_path / "memory.sqlite") == []


def test_a_request_is_alone_only_in_a_set_of_one() -> None:
    assert not lone_request({})  # not served by the server's protocol: never alone
    assert lone_request({REQUESTS_KEY: {"this one"}})
    assert not lone_request({REQUESTS_KEY: {"this one", "another"}})


def test_nothing_runs_in_place_when_every_commit_waits_for_the_disk(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "memory.sqlite", synchronous="full")
    writer.start()
    try:
        assert writer.run_if_idle(insert("durable")) is None
        writer.call(insert("queued"))
    finally:
        writer.stop()
    assert actions(tmp_path / "memory.sqlite") == ["queued"]
