"""SQL of the hygiene operations: what a session or a project owns, counted, moved, removed.

Every statement takes named parameters: ``ws``/``proj`` (the scope), ``sid`` (a session
id), ``path`` (a page path), ``to_ws``/``to_proj`` (a move's target). The counts and the
removals are written side by side so a dry run counts exactly what the real run removes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping

SESSION_SCOPES = """
SELECT workspace, project FROM sessions
WHERE session_id = :sid AND (:ws IS NULL OR workspace = :ws) AND (:proj IS NULL OR project = :proj)
ORDER BY workspace, project
"""
PAGE_VERSION_IDS = """
SELECT id FROM pages WHERE workspace = :ws AND project = :proj AND path = :path ORDER BY version
"""
LATEST_PAGE = """
SELECT id FROM pages WHERE workspace = :ws AND project = :proj AND path = :path AND is_latest = 1
"""
PROJECT_PATHS = """
SELECT DISTINCT path FROM pages WHERE workspace = :ws AND project = :proj ORDER BY path
"""
SOME_PROJECT_OBSERVATIONS = """
SELECT id FROM observations WHERE workspace = :ws AND project = :proj ORDER BY id LIMIT 500
"""
SOME_PROJECT_PATHS = """
SELECT DISTINCT path FROM pages WHERE workspace = :ws AND project = :proj LIMIT 500
"""
PROJECT_LATEST_IDS = """
SELECT id FROM pages WHERE workspace = :ws AND project = :proj AND is_latest = 1
"""
PROJECT_EXISTS = "SELECT 1 FROM projects WHERE workspace = :ws AND name = :proj"

# What one session owns, table by table: (count, remove) pairs over the same rows.
_SESSION_ROWS = {
    "sessions": "sessions WHERE workspace = :ws AND project = :proj AND session_id = :sid",
    "observations": (
        "observations WHERE workspace = :ws AND project = :proj AND session_id = :sid"
    ),
    "handoffs": "handoffs WHERE workspace = :ws AND project = :proj AND from_session = :sid",
    "page_evidence": (
        "page_evidence WHERE workspace = :ws AND project = :proj AND session_id = :sid"
    ),
    "llm_jobs": "llm_jobs WHERE workspace = :ws AND project = :proj AND session_id = :sid",
    "pending_writes": (
        "pending_writes WHERE workspace = :ws AND project = :proj AND session_id = :sid"
    ),
}
# What one page path owns beside its versions.
_PAGE_ROWS = {
    "pages": "pages WHERE workspace = :ws AND project = :proj AND path = :path",
    "page_feedback": "page_feedback WHERE workspace = :ws AND project = :proj AND path = :path",
    "page_vectors": """page_vectors WHERE page_id IN (
        SELECT id FROM pages WHERE workspace = :ws AND project = :proj AND path = :path)""",
    "links": """links WHERE src_id IN (
        SELECT id FROM pages WHERE workspace = :ws AND project = :proj AND path = :path)""",
    "entities": """entities WHERE page_id IN (
        SELECT id FROM pages WHERE workspace = :ws AND project = :proj AND path = :path)""",
}
# What one project owns, beyond its pages' own rows (removed page by page).
_PROJECT_ROWS = {
    "sessions": "sessions WHERE workspace = :ws AND project = :proj",
    "observations": "observations WHERE workspace = :ws AND project = :proj",
    "handoffs": "handoffs WHERE workspace = :ws AND project = :proj",
    "page_evidence": "page_evidence WHERE workspace = :ws AND project = :proj",
    "llm_jobs": "llm_jobs WHERE workspace = :ws AND project = :proj",
    "pending_writes": "pending_writes WHERE workspace = :ws AND project = :proj",
    "learning_watermarks": "learning_watermarks WHERE workspace = :ws AND project = :proj",
    "page_feedback": "page_feedback WHERE workspace = :ws AND project = :proj",
    "page_vectors": "page_vectors WHERE workspace = :ws AND project = :proj",
    "links": "links WHERE workspace = :ws AND project = :proj",
    "entities": "entities WHERE workspace = :ws AND project = :proj",
    "pages": "pages WHERE workspace = :ws AND project = :proj",
    # Its inbox; what it sent stays with the projects it went to.
    "messages": "messages WHERE to_workspace = :ws AND to_project = :proj",
    # Old names that led to it (a renamed or merged project) lead nowhere once it is gone.
    "project_aliases": ("project_aliases WHERE target_workspace = :ws AND target_project = :proj"),
}

# The observation index is contentless: a removal repeats the text it indexed.
UNINDEX_SESSION_OBSERVATIONS = """
INSERT INTO observations_fts(observations_fts, rowid, body)
SELECT 'delete', id, fts_text(CASE WHEN coalesce(tool_name, '') != ''
    THEN tool_name || ' ' || body ELSE body END)
FROM observations WHERE workspace = :ws AND project = :proj AND session_id = :sid
"""
UNINDEX_PROJECT_OBSERVATIONS = """
INSERT INTO observations_fts(observations_fts, rowid, body)
SELECT 'delete', id, fts_text(CASE WHEN coalesce(tool_name, '') != ''
    THEN tool_name || ' ' || body ELSE body END)
FROM observations WHERE workspace = :ws AND project = :proj
"""
DELETE_PROJECT = "DELETE FROM projects WHERE workspace = :ws AND name = :proj"
# Rewrite the index's segments without the deleted entries, so no removed word survives.
OPTIMIZE_FTS = (
    "INSERT INTO pages_fts(pages_fts) VALUES ('optimize')",
    "INSERT INTO pages_cjk(pages_cjk) VALUES ('optimize')",
    "INSERT INTO observations_fts(observations_fts) VALUES ('optimize')",
)

# A move rewrites the scope of the rows that are the session's; the FTS rows key on ids
# alone. Page evidence and pending writes name pages of the project they are in (drawn
# from the session), and those pages stay where they are, so those rows stay too.
STAYING_WITH_PAGES = frozenset({"page_evidence", "pending_writes"})
_SESSION_MOVES = {
    table: f"UPDATE {rows.split(' WHERE ')[0]} SET workspace = :to_ws, project = :to_proj "
    f"WHERE {rows.split(' WHERE ', 1)[1]}"
    for table, rows in _SESSION_ROWS.items()
    if table not in STAYING_WITH_PAGES
}
MOVE_PAGE_VERSIONS = """
UPDATE pages SET workspace = :to_ws, project = :to_proj
WHERE workspace = :ws AND project = :proj AND path = :path
"""
MOVE_PAGE_FEEDBACK = """
UPDATE page_feedback SET workspace = :to_ws, project = :to_proj
WHERE workspace = :ws AND project = :proj AND path = :path
"""
# Collisions a move would hit in the target scope.
TARGET_SESSION = """
SELECT 1 FROM sessions WHERE workspace = :to_ws AND project = :to_proj AND session_id = :sid
"""
TARGET_PAGE = """
SELECT 1 FROM pages WHERE workspace = :to_ws AND project = :to_proj AND path = :path LIMIT 1
"""
TARGET_INGEST_KEYS = """
SELECT o.ingest_key FROM observations o JOIN observations t ON t.workspace = :to_ws
    AND t.project = :to_proj AND t.ingest_key = o.ingest_key
WHERE o.workspace = :ws AND o.project = :proj AND o.session_id = :sid LIMIT 5
"""


def _count(conn: sqlite3.Connection, rows: str, params: Mapping[str, object]) -> int:
    return int(conn.execute(f"SELECT count(*) FROM {rows}", params).fetchone()[0])


def session_counts(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    return {table: _count(conn, rows, params) for table, rows in _SESSION_ROWS.items()}


def page_counts(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    return {table: _count(conn, rows, params) for table, rows in _PAGE_ROWS.items()}


def project_counts(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    return {table: _count(conn, rows, params) for table, rows in _PROJECT_ROWS.items()}


def delete_session_rows(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    conn.execute(UNINDEX_SESSION_OBSERVATIONS, params)
    return {t: conn.execute(f"DELETE FROM {r}", params).rowcount for t, r in _SESSION_ROWS.items()}


def delete_page_rows(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    """Every version of a page and what hangs off them; the caller unindexes the latest
    first (``pages.drop_derived``), which removes its links, entities and vectors."""
    order = ("page_vectors", "links", "entities", "page_feedback", "pages")
    return {t: conn.execute(f"DELETE FROM {_PAGE_ROWS[t]}", params).rowcount for t in order}


def delete_project_rows(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    conn.execute(UNINDEX_PROJECT_OBSERVATIONS, params)
    removed = {
        t: conn.execute(f"DELETE FROM {r}", params).rowcount for t, r in _PROJECT_ROWS.items()
    }
    conn.execute(DELETE_PROJECT, params)
    return removed


def move_session_rows(conn: sqlite3.Connection, params: Mapping[str, object]) -> dict[str, int]:
    return {t: conn.execute(sql, params).rowcount for t, sql in _SESSION_MOVES.items()}


def optimize_indexes(conn: sqlite3.Connection) -> None:
    for statement in OPTIMIZE_FTS:
        conn.execute(statement)
