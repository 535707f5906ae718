"""Id lists padded for the statement cache: a few lengths, the same ids, the same answer."""

from __future__ import annotations

import sqlite3

from ai_memory.retrieval.inlist import marks, padded


def test_a_list_takes_one_of_a_few_lengths_and_keeps_its_ids() -> None:
    lengths = set()
    for n in range(1, 101):
        values = list(range(100, 100 + n))
        out = padded(values)
        assert out[:n] == values and set(out) == set(values)
        assert len(out) >= n and len(out) & (len(out) - 1) == 0  # a power of two
        lengths.add(len(out))
    assert len(lengths) == 8
    assert padded([]) == []


def test_a_padded_in_list_selects_the_same_rows() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"n{i}") for i in range(50)])
    for ids in ([3], [7, 2, 9], [1, 4, 6, 8, 10], list(range(0, 50, 3))):
        sql = "SELECT id, name FROM t WHERE id IN ({marks})"
        plain = conn.execute(sql.format(marks=marks(len(ids))), ids).fetchall()
        wide = padded(ids)
        assert conn.execute(sql.format(marks=marks(len(wide))), wide).fetchall() == plain
