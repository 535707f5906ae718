"""The candidates' final order: fused score times authority, ties by identity."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection
from operator import itemgetter
from typing import Any

from ai_memory.retrieval.authority import authority
from ai_memory.retrieval.fusion import Fused
from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.rows import (
    IS_LATEST,
    KIND,
    PATH,
    PINNED,
    PROJECT,
    TAGS,
    TIER,
    VERSION,
    WORKSPACE,
)

# Feedback counts for the page version it was given on: a rewrite leaves it behind.
FEEDBACK = """
SELECT page_id, signal, count(*) AS n FROM page_feedback
WHERE page_id IN ({marks}) GROUP BY page_id, signal
"""

# Sort key, page id, score, row, authority factor and its parts.
Scored = tuple[tuple[Any, ...], int, float, sqlite3.Row, float, dict[str, float]]


def scored(
    conn: sqlite3.Connection,
    fused: dict[int, Fused],
    rows: dict[int, sqlite3.Row],
    *,
    pin_first: bool,
    feedback_weight: float,
) -> list[Scored]:
    """The candidates by fused score times authority, best first (pinned pages first
    with ``pin_first``).

    Ties go by identity, never by page id: ids are not stable across a rebuild.
    Pages of one standing (kind, tier, pin, tags, version) without feedback share
    one authority, worked out once.
    """
    # At weight 0 feedback moves no factor and names no part: it is not read.
    feedback = _feedback(conn, rows) if feedback_weight else {}
    known: dict[tuple[Any, ...], tuple[float, dict[str, float]]] = {}
    out: list[Scored] = []
    for page_id, row in rows.items():
        kind, tier, pinned, tags, latest = (
            row[KIND],
            row[TIER],
            row[PINNED],
            row[TAGS],
            row[IS_LATEST],
        )
        votes = feedback.get(page_id, {})
        standing = (kind, tier, pinned, tags, latest)
        found = None if votes else known.get(standing)
        if found is None:
            found = authority(
                kind=kind,
                tier=tier,
                pinned=bool(pinned),
                tags=json.loads(tags) if tags != "[]" else (),
                feedback=votes,
                feedback_weight=feedback_weight,
                older_version=not latest,
            )
            if not votes:
                known[standing] = found
        factor, parts = found
        score = fused[page_id].rrf * factor
        identity = (row[WORKSPACE], row[PROJECT], row[PATH], -int(row[VERSION]))
        key = (not pinned, -score, *identity) if pin_first else (-score, *identity)
        out.append((key, page_id, score, row, factor, parts))
    out.sort(key=itemgetter(0))
    return out


def _feedback(conn: sqlite3.Connection, page_ids: Collection[int]) -> dict[int, dict[str, int]]:
    ids = padded(sorted(page_ids))
    if not ids:
        return {}
    out: dict[int, dict[str, int]] = {}
    for r in conn.execute(FEEDBACK.format(marks=marks(len(ids))), ids):
        out.setdefault(int(r["page_id"]), {})[r["signal"]] = int(r["n"])
    return out
