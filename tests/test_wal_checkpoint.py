"""The WAL is copied back outside write transactions and cannot grow without limit."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import pytest

from ai_memory.store.checkpoint import Checkpointer
from ai_memory.store.writer import Writer

BLOB = "x" * 3000  # about one database page per row


def write_rows(conn: sqlite3.Connection) -> None:
    conn.executemany(
        "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', 'fill', ?)",
        [(BLOB,)] * 20,
    )


def wal_size(db: Path) -> int:
    return db.with_name(db.name + "-wal").stat().st_size


def test_the_writing_connection_never_checkpoints_inside_a_commit(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    writer = Writer(db)
    writer.start()
    try:
        value = writer.call(lambda c: c.execute("PRAGMA wal_autocheckpoint").fetchone()[0])
    finally:
        writer.stop()
    assert value == 0


def test_the_checkpointer_copies_the_wal_back_after_writes(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    writer = Writer(db)
    writer.start()
    try:
        writer.call(write_rows)
        deadline = time.monotonic() + 10
        while writer.checkpointer.checkpoints == 0 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert writer.checkpointer.checkpoints >= 1
        # What was copied back is in the database file itself, not only in the WAL.
        assert db.stat().st_size > 20 * 3000
    finally:
        writer.stop()
    assert not db.with_name(db.name + "-wal").exists()  # the last close removed it


def test_a_writer_that_never_pauses_still_keeps_the_wal_bounded(tmp_path: Path) -> None:
    db = tmp_path / "m.sqlite"
    writer = Writer(db)
    # A checkpointer that copies once and then sleeps: the writer must step in itself.
    writer.checkpointer = Checkpointer(db, interval_s=3600, limit_bytes=400_000)
    writer.start()
    try:
        largest = 0
        for _ in range(60):  # 60 transactions of ~20 pages: ~5 MB of WAL unchecked
            writer.call(write_rows)
            largest = max(largest, wal_size(db))
        rows = writer.call(lambda c: c.execute("SELECT count(*) FROM audit_log").fetchone()[0])
    finally:
        writer.stop()
    assert rows >= 1200
    assert largest < 1_000_000  # the limit plus a transaction or two, not 5 MB


def test_a_checkpoint_that_fails_is_logged_and_the_writer_writes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A closed connection: SQLite refuses the checkpoint as it would on an I/O error.
    closed = sqlite3.connect(tmp_path / "other.sqlite")
    closed.close()
    checkpointer = Checkpointer(tmp_path / "other.sqlite")
    with caplog.at_level("WARNING"):
        checkpointer.try_checkpoint(closed)  # does not raise into the writer's thread
    assert "WAL checkpoint failed" in caplog.text
    writer = Writer(tmp_path / "w.sqlite")
    writer.start()
    try:
        writer.checkpointer.try_checkpoint(closed)
        assert writer.call(lambda conn: conn.execute("SELECT 1").fetchone()[0]) == 1
    finally:
        writer.stop()
