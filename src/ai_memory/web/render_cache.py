"""Rendered pages that depend only on the wiki's content, kept until the next write.

The tree and the graph of a big project cost tens of milliseconds to build and
render, yet change only when a page is written or deleted. Each entry is keyed
by what it shows and the data version (newest audit row, newest page version),
so any write makes every entry stale at once (a sign-in or sign-out writes no
page, so its audit row does not). One cache per app, bounded.
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Hashable

# Audit rows that change no page: a sign-in or sign-out leaves every render as it was.
CHANGES_PAGES = "action NOT IN ('sign-in', 'sign-out')"
# The newest such row, walking back from the newest row (past sign-ins only).
VERSION = f"""
SELECT coalesce((SELECT id FROM audit_log WHERE {CHANGES_PAGES} ORDER BY id DESC LIMIT 1), 0),
       (SELECT coalesce(max(id), 0) FROM pages)
"""
ENTRIES = 64


def data_version(conn: sqlite3.Connection) -> tuple[int, int]:
    row = conn.execute(VERSION).fetchone()
    return int(row[0]), int(row[1])


class RenderCache:
    def __init__(self, entries: int = ENTRIES) -> None:
        self.entries = entries
        self._bodies: OrderedDict[Hashable, tuple[int, bytes]] = OrderedDict()

    def get(self, key: Hashable) -> tuple[int, bytes] | None:
        found = self._bodies.get(key)
        if found is not None:
            self._bodies.move_to_end(key)
        return found

    def put(self, key: Hashable, status: int, body: bytes) -> None:
        self._bodies[key] = (status, body)
        self._bodies.move_to_end(key)
        while len(self._bodies) > self.entries:
            self._bodies.popitem(last=False)
