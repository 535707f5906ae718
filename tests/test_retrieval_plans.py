"""The entity stream starts from the few entity rows the query names, never from the pages.

With the listing index on latest pages, the planner may otherwise walk every latest
page and look up its entities: the same answer, tens of milliseconds later at 10,000
pages. These plans catch that early.
"""

from __future__ import annotations

import sqlite3

import pytest

from ai_memory.retrieval.streams.entities import ENTITY_PAGES


def plan(conn: sqlite3.Connection, sql: str, params: tuple[object, ...]) -> list[str]:
    return [str(row[3]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


LATEST = "p.is_latest = 1 AND (p.expires_at IS NULL OR p.expires_at > ?)"


@pytest.mark.parametrize(
    ("scope", "scope_params", "index"),
    [
        ("1", (), "entities_by_norm"),  # every project
        ("e.workspace = ? AND e.project = ?", ("default", "p"), "entities_norm"),
    ],
)
def test_entity_matches_are_looked_up_by_name_then_joined_to_their_page(
    schema_conn: sqlite3.Connection, scope: str, scope_params: tuple[str, ...], index: str
) -> None:
    sql = ENTITY_PAGES.format(marks="?,?", scope=scope, where=LATEST)
    steps = plan(schema_conn, sql, ("refund", "queue", *scope_params, "2026-12-01"))
    assert steps[0].startswith("SEARCH e USING INDEX") and index in steps[0], steps
    assert steps[1].startswith("SEARCH p USING INTEGER PRIMARY KEY"), steps
