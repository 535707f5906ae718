"""SQL of the lint rules: each query returns the rows one rule reports, for one project.

``_lint/`` pages are never linted (the report must not find itself).
"""

from __future__ import annotations

import sqlite3
from typing import Any

NOT_LINT = "path NOT LIKE '\\_lint/%' ESCAPE '\\'"

DANGLING = f"""
SELECT s.path, l.dst_workspace, l.dst_project, l.dst_path
FROM pages s JOIN links l ON l.src_id = s.id
WHERE s.workspace = :workspace AND s.project = :project AND s.is_latest = 1
    AND s.{NOT_LINT}
    AND NOT EXISTS (SELECT 1 FROM pages d WHERE d.workspace = l.dst_workspace
        AND d.project = l.dst_project AND d.path = l.dst_path AND d.is_latest = 1)
ORDER BY s.path, l.dst_project, l.dst_path
"""

EXPIRED_LINKED = f"""
SELECT s.path, d.workspace AS dst_workspace, d.project AS dst_project, d.path AS dst_path
FROM pages s JOIN links l ON l.src_id = s.id
JOIN pages d ON d.workspace = l.dst_workspace AND d.project = l.dst_project
    AND d.path = l.dst_path AND d.is_latest = 1
WHERE s.workspace = :workspace AND s.project = :project AND s.is_latest = 1
    AND s.{NOT_LINT} AND d.expires_at IS NOT NULL AND d.expires_at <= :now
ORDER BY s.path, d.path
"""

# Curated pages nothing links to; sessions, slots, rules and the index files are
# found by other means, so they are never orphans.
ORPHANS = f"""
SELECT p.path FROM pages p
WHERE p.workspace = :workspace AND p.project = :project AND p.is_latest = 1 AND p.pinned = 0
    AND p.kind IN ('concept', 'decision', 'gotcha', 'procedure', 'note')
    AND p.path NOT IN ('index.md', 'log.md') AND p.{NOT_LINT}
    AND NOT EXISTS (SELECT 1 FROM links l JOIN pages s ON s.id = l.src_id AND s.is_latest = 1
        WHERE l.dst_workspace = p.workspace AND l.dst_project = p.project
            AND l.dst_path = p.path AND s.path != p.path)
ORDER BY p.path
"""

BROKEN_FRONTMATTER = f"""
SELECT path, frontmatter_error FROM pages
WHERE workspace = :workspace AND project = :project AND is_latest = 1
    AND frontmatter_error IS NOT NULL AND {NOT_LINT}
ORDER BY path
"""

DUPLICATE_TITLES = f"""
SELECT lower(title) AS title, group_concat(path, '\n') AS paths FROM (
    SELECT title, path FROM pages
    WHERE workspace = :workspace AND project = :project AND is_latest = 1 AND {NOT_LINT}
        AND kind != 'session'
    ORDER BY path)
GROUP BY lower(title) HAVING count(*) > 1 ORDER BY lower(title)
"""

FLAGGED = f"""
SELECT p.path, f.signal, f.reason FROM pages p JOIN page_feedback f ON f.page_id = p.id
WHERE p.workspace = :workspace AND p.project = :project AND p.is_latest = 1
    AND f.signal IN ('stale', 'wrong') AND p.{NOT_LINT}
ORDER BY p.path, f.id
"""


def run(conn: sqlite3.Connection, query: str, params: dict[str, Any]) -> list[sqlite3.Row]:
    return list(conn.execute(query, params))
