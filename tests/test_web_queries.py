"""The UI's big reads stay on their indexes: a project's listing and the sessions timeline.

A query that drifts from its index (a reworded condition, an added column) still
answers, only slower as the tables grow; these plans catch that early.
"""

from __future__ import annotations

import sqlite3

import pytest

from ai_memory.web import graph, page_views, session_queries, ui_queries


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
    schema_conn: sqlite3.Connection, sql: str, params: tuple[object, ...]
) -> None:
    assert "COVERING INDEX pages_listing" in plan(schema_conn, sql, params)


def test_the_timeline_counts_failed_calls_from_their_own_index(
    schema_conn: sqlite3.Connection,
) -> None:
    everywhere = plan(schema_conn, session_queries.TIMELINE_ALL, (1, 50))
    one_project = plan(schema_conn, session_queries.TIMELINE_PROJECT, ("default", "p", 1, 50))
    for shown in (everywhere, one_project):
        assert "INDEX observations_failed" in shown, shown
