"""The page rows one search has read: each read once, then shared by every step.

The page stream reads its best matches' rows to filter them, the evidence
stream its session pages' rows, the graph its seeds', and the hits are built
from most of the same rows again. They all read the columns of ``COLUMNS``
(the ones before the body, so no overflow page is touched), and whoever needs
a row asks ``PageRows`` first. It lives for one search, on one read
transaction, so a row it hands out is the row a new read would return.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ai_memory.retrieval.inlist import marks, padded

# What a hit is made of; a stream's statement selects them from its page alias ``p``,
# first in its row (other columns may follow).
COLUMNS = (
    "p.id, p.workspace, p.project, p.path, p.version, p.is_latest, p.title, p.kind, "
    "p.tier, p.tags, p.pinned, p.expires_at"
)
# Their positions: a row is read by position where many rows are read (by name, a
# ``sqlite3.Row`` compares the name with each column's until it finds it).
ID, WORKSPACE, PROJECT, PATH, VERSION, IS_LATEST, TITLE, KIND = range(8)
TIER, TAGS, PINNED, EXPIRES_AT = range(8, 12)
BY_ID = f"SELECT {COLUMNS} FROM pages p WHERE p.id IN ({{marks}})"


class PageRows:
    """A search's page rows by id (``COLUMNS``), read through to the database."""

    def __init__(self) -> None:
        self._rows: dict[int, sqlite3.Row] = {}

    def keep(self, rows: Iterable[sqlite3.Row]) -> None:
        """Remember rows a stream read with ``COLUMNS`` first (others may follow)."""
        self._rows.update((row[ID], row) for row in rows)

    def read(self, conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, sqlite3.Row]:
        """The rows of ``ids`` that exist, by ascending id; only the unseen ones are read."""
        wanted = sorted(set(ids))
        missing = [i for i in wanted if i not in self._rows]
        if missing:
            ids = padded(missing)
            self.keep(conn.execute(BY_ID.format(marks=marks(len(ids))), ids))
        return {i: self._rows[i] for i in wanted if i in self._rows}
