"""File stamps: the size and modification time a page file had when its bytes hashed to
a content hash, so the start-up check reads only the files whose stamp moved.

A stamp is a cache of "this file hashed to this", never a statement about the index:
the check trusts a file only when its stamp's hash is also the hash the index holds.
A stamp left behind by a rename or a purge is therefore harmless.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

Key = tuple[str, str, str]  # (workspace, project, path)
Stamp = tuple[int, int, str]  # (size, mtime_ns, content_hash)
Stat = tuple[int, int]  # (size, mtime_ns)

# Only the stamps whose hash is the one the index holds: a file still at its stamp is
# then unchanged since it was indexed.
CURRENT_STAMPS = """
SELECT s.workspace, s.project, s.path, s.size, s.mtime_ns FROM file_stamps s
JOIN pages p ON p.workspace = s.workspace AND p.project = s.project AND p.path = s.path
    AND p.is_latest = 1 AND p.content_hash = s.content_hash
"""
# Every latest page's hash with its file's stamp when the stamp holds that same hash: one
# pass over the index, one key per page for both maps.
LATEST_WITH_STAMPS = """
SELECT p.workspace, p.project, p.path, p.content_hash, s.size, s.mtime_ns FROM pages p
LEFT JOIN file_stamps s ON s.workspace = p.workspace AND s.project = p.project
    AND s.path = p.path AND s.content_hash = p.content_hash
WHERE p.is_latest = 1
"""
UPSERT_STAMP = """
INSERT INTO file_stamps(workspace, project, path, size, mtime_ns, content_hash)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (workspace, project, path) DO UPDATE SET size = excluded.size,
    mtime_ns = excluded.mtime_ns, content_hash = excluded.content_hash
"""


def current_stamps(conn: sqlite3.Connection) -> dict[Key, Stat]:
    return {(r[0], r[1], r[2]): (int(r[3]), int(r[4])) for r in conn.execute(CURRENT_STAMPS)}


def latest_with_stamps(conn: sqlite3.Connection) -> tuple[dict[Key, str], dict[Key, Stat]]:
    """(hash of every latest page, stamp of those whose file still hashes to it)."""
    hashes: dict[Key, str] = {}
    stamps: dict[Key, Stat] = {}
    rows = conn.cursor()
    rows.row_factory = None  # plain tuples, the fastest rows to unpack (this cursor only)
    for workspace, project, path, content_hash, size, mtime_ns in rows.execute(LATEST_WITH_STAMPS):
        key = (workspace, project, path)
        hashes[key] = content_hash
        if size is not None:
            stamps[key] = (size, mtime_ns)
    return hashes, stamps


def record(conn: sqlite3.Connection, stamps: Iterable[tuple[Key, Stamp]]) -> None:
    """Inside the writer's transaction."""
    conn.executemany(UPSERT_STAMP, [(*key, *stamp) for key, stamp in stamps])
