"""What the index holds for the files the watcher names, read for a whole batch at once.

The watcher hears about every file the server writes as well as hand edits; telling
the two apart means comparing each file with the index's hash. These reads take one
connection for the batch and fetch only the id and hash of each latest page (not its
body), and a folder's pages come from a range of the index rather than a scan of all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ai_memory.store.stamps import Key

LATEST_HASH = """
SELECT id, content_hash FROM pages
WHERE workspace = ? AND project = ? AND path = ? AND is_latest = 1
"""
IN_WORKSPACE = "SELECT project, path FROM pages WHERE workspace = ? AND is_latest = 1"
IN_PROJECT = "SELECT path FROM pages WHERE workspace = ? AND project = ? AND is_latest = 1"
IN_FOLDER = """
SELECT path FROM pages WHERE workspace = ? AND project = ? AND is_latest = 1
    AND path >= ? AND path < ?
"""


def latest_hashes(conn: sqlite3.Connection, keys: Iterable[Key]) -> dict[Key, tuple[int, str]]:
    """(id, content hash) of the latest version of each key the index holds."""
    cursor = conn.cursor()
    cursor.row_factory = None  # plain tuples (this cursor only)
    found: dict[Key, tuple[int, str]] = {}
    for key in keys:
        row = cursor.execute(LATEST_HASH, key).fetchone()
        if row is not None:
            found[key] = (int(row[0]), str(row[1]))
    return found


def indexed_under(conn: sqlite3.Connection, folder: str) -> list[str]:
    """Wiki-relative paths of the latest pages beneath the wiki-relative ``folder``."""
    parts = folder.strip("/").split("/", 2)
    cursor = conn.cursor()
    cursor.row_factory = None
    if len(parts) == 1:
        rows = cursor.execute(IN_WORKSPACE, (parts[0],))
        return [f"{parts[0]}/{project}/{path}" for project, path in rows]
    if len(parts) == 2:
        rows = cursor.execute(IN_PROJECT, (parts[0], parts[1]))
    else:
        # Every path that starts with "<folder>/": '0' is the character after '/'.
        rows = cursor.execute(IN_FOLDER, (parts[0], parts[1], parts[2] + "/", parts[2] + "0"))
    return [f"{parts[0]}/{parts[1]}/{path}" for (path,) in rows]
