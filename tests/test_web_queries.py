"""The UI's big reads stay on their indexes: a project's listing and the sessions timeline.

A query that drifts from its index (a reworded condition, an added column) still
answers, only slower as the tables grow; these plans catch that early.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import migrate
from ai_memory.web import graph, page_views, session_queries, ui_queries


@pytest.fixture
def conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    connection = connect_writer(tmp_path / "db.sqlite", "normal")
    migrate(connection)
    try:
        yield connection
    finally:
        connection.close()


def plan(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> str:
    return " | ".join(str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


@pytest.mark.parametrize(
    ("sql", "params"),
    [
        (ui_queries.KIND_COUNTS, ("default", "p")),
        (page_views.TREE, ("default", "p")),
        (graph.NODES, ("default", "p")),
    ],
)
def test_a_projects_listing_reads_the_covering_index(
    conn: sqlite3.Connection, sql: str, params: tuple[object, ...]
) -> None:
    assert "COVERING INDEX pages_listing" in plan(conn, sql, params)


def test_the_timeline_counts_failed_calls_from_their_own_index(conn: sqlite3.Connection) -> None:
    everywhere = plan(conn, session_queries.TIMELINE_ALL, (1, 50))
    one_project = plan(conn, session_queries.TIMELINE_PROJECT, ("default", "p", 1, 50))
    for shown in (everywhere, one_project):
        assert "INDEX observations_failed" in shown, shown
