"""A reclaim step gives back the pages it is asked for, not one per transaction."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ai_memory.store.db import connect_writer, reclaim_step


def free_pages(path: Path, rows: int) -> tuple[sqlite3.Connection, int]:
    conn = connect_writer(path)
    conn.execute("CREATE TABLE t (x BLOB)")
    conn.executemany("INSERT INTO t VALUES (?)", [(b"x" * 1500,) for _ in range(rows)])
    conn.execute("DELETE FROM t")
    return conn, int(conn.execute("PRAGMA freelist_count").fetchone()[0])


def test_a_step_frees_up_to_its_page_count(tmp_path: Path) -> None:
    conn, free = free_pages(tmp_path / "db.sqlite", 400)
    assert free > 100
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    assert reclaim_step(conn, 40) == free - 40
    assert conn.execute("PRAGMA page_count").fetchone()[0] == pages - 40
    assert reclaim_step(conn, free) == 0  # asks for more than is left: gives back the rest


def test_a_step_inside_a_transaction_leaves_it_open(tmp_path: Path) -> None:
    conn, free = free_pages(tmp_path / "db.sqlite", 200)
    conn.execute("SAVEPOINT step")
    assert reclaim_step(conn, 10) == free - 10
    assert conn.in_transaction
    conn.execute("ROLLBACK TO step")
    conn.execute("RELEASE step")
    assert conn.execute("PRAGMA freelist_count").fetchone()[0] == free
