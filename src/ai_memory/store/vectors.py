"""SQL for page-chunk vectors. Each row names the provider, model and dimension behind it."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

INSERT = """
INSERT INTO page_vectors (page_id, workspace, project, chunk, provider, model, dim, vector,
    created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
"""
DELETE_FOR_PAGE = "DELETE FROM page_vectors WHERE page_id = ?"
IS_LATEST = "SELECT workspace, project FROM pages WHERE id = ? AND is_latest = 1"
DELETE_STALE = """
DELETE FROM page_vectors WHERE id IN (
    SELECT id FROM page_vectors WHERE NOT (provider = ? AND model = ? AND dim = ?) LIMIT ?
)
"""

# Latest pages with no vector of the current model, oldest first, after a watermark.
PENDING = """
SELECT p.id, p.title, p.body, p.frontmatter FROM pages p
WHERE p.is_latest = 1 AND p.id > ? AND NOT EXISTS (
    SELECT 1 FROM page_vectors v
    WHERE v.page_id = p.id AND v.provider = ? AND v.model = ? AND v.dim = ?
)
ORDER BY p.id LIMIT ?
"""
PENDING_COUNT = """
SELECT count(*) FROM pages p
WHERE p.is_latest = 1 AND NOT EXISTS (
    SELECT 1 FROM page_vectors v
    WHERE v.page_id = p.id AND v.provider = ? AND v.model = ? AND v.dim = ?
)
"""
COUNTS = """
SELECT count(*) AS chunks, count(DISTINCT page_id) AS pages FROM page_vectors
WHERE provider = ? AND model = ? AND dim = ?
"""
STALE_COUNT = "SELECT count(*) FROM page_vectors WHERE NOT (provider = ? AND model = ? AND dim = ?)"
LOAD = """
SELECT id, page_id, workspace, project, chunk, vector FROM page_vectors
WHERE provider = ? AND model = ? AND dim = ? AND id > ? ORDER BY id
"""
STATE = "SELECT max(id), count(*) FROM page_vectors WHERE provider = ? AND model = ? AND dim = ?"


def replace_page_vectors(
    conn: sqlite3.Connection,
    page_id: int,
    identity: tuple[str, str, int],
    vectors: Sequence[bytes],
    now: str,
) -> bool:
    """Store a page's chunk vectors; skipped (False) when the page is no longer latest."""
    row = conn.execute(IS_LATEST, (page_id,)).fetchone()
    if row is None:
        return False
    provider, model, dim = identity
    conn.execute(DELETE_FOR_PAGE, (page_id,))
    conn.executemany(
        INSERT,
        [
            (page_id, row[0], row[1], chunk, provider, model, dim, blob, now)
            for chunk, blob in enumerate(vectors)
        ],
    )
    return True


def delete_stale(conn: sqlite3.Connection, identity: tuple[str, str, int], limit: int) -> int:
    cursor = conn.execute(DELETE_STALE, (*identity, limit))
    return int(cursor.rowcount)
