"""Observation evidence: raw captured observations vote for their session's page.

Each matching session votes once, through its best observation, for
``sessions/<session_id>.md``; the same rows are the ``raw_hits`` answer when no
page matches at all.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.query import PreparedQuery
from ai_memory.retrieval.rows import COLUMNS, ID, PATH, PROJECT, WORKSPACE, PageRows
from ai_memory.retrieval.streams import StreamHit, StreamResult

OBSERVATIONS = """
SELECT o.id, o.workspace, o.project, o.session_id, o.kind, o.created_at,
    bm25(observations_fts) AS score
FROM observations_fts JOIN observations o ON o.id = observations_fts.rowid
WHERE observations_fts MATCH ? AND {where}
ORDER BY score, o.id LIMIT ?
"""

# Fast path, as for pages: rank inside the index alone, then scope the best few
# (read by id in a second statement: as a join, reading them cost more than ranking).
# Only the newest WINDOW matches are ranked: BM25 costs a lookup per matching
# row, and old sessions are represented by their pages anyway.
TOP_MATCHES = """
SELECT rowid, bm25(observations_fts) AS score FROM observations_fts
WHERE observations_fts MATCH ? AND rowid >= ? ORDER BY score, rowid LIMIT ?
"""
# NOT INDEXED: by rowid, never by walking an index of the project's observations.
TOP_ROWS = """
SELECT o.id, o.workspace, o.project, o.session_id, o.kind, o.created_at
FROM observations o NOT INDEXED WHERE o.id IN ({marks}) AND {where}
"""
WINDOW_START = """
SELECT rowid FROM observations_fts WHERE observations_fts MATCH ?
ORDER BY rowid DESC LIMIT 1 OFFSET ?
"""
PREFILTER = 10
WINDOW = 1000
TURNS = 2  # the best matching turns a session hit carries (each with its reply)
CHOICE = 8  # the matching turns of a session its shown turns are chosen from (turn_choice)

BODIES = "SELECT id, body FROM observations WHERE id IN ({marks})"

# Each session page by its whole identity (the unique latest-page index); CROSS JOIN
# keeps the identities as the outer loop, so no index over a project's pages is walked.
# Whole rows (``COLUMNS``): a session hit is built from them without reading them again.
SESSION_PAGES = (
    f"SELECT {COLUMNS} FROM"
    + """ (VALUES {rows}) v
CROSS JOIN pages p ON p.workspace = v.column1 AND p.project = v.column2 AND p.path = v.column3
WHERE {where}
"""
)


@dataclass(frozen=True, slots=True)
class Observation:
    id: int
    workspace: str
    project: str
    session_id: str
    kind: str
    created_at: str
    score: float


def match_observations(
    conn: sqlite3.Connection, query: PreparedQuery, page_filter: PageFilter, limit: int
) -> list[Observation]:
    """Best-first matching observations in the filter's scopes (and before ``as_of``)."""
    if not query.fts:
        return []
    clauses, params = page_filter.scope_clause("o")
    if page_filter.as_of:
        clauses.append("o.created_at <= ?")
        params.append(page_filter.as_of)
    where = " AND ".join(clauses) or "1"
    try:
        return _ranked(conn, query.fts, where, params, limit)
    except sqlite3.OperationalError:
        if not query.fallback or query.fallback == query.fts:
            raise
        return _ranked(conn, query.fallback, where, params, limit)


def _ranked(
    conn: sqlite3.Connection, expression: str, where: str, params: list[Any], limit: int
) -> list[Observation]:
    start = conn.execute(WINDOW_START, (expression, WINDOW - 1)).fetchone()
    first = int(start[0]) if start else 0
    # The best ``limit`` matches are the answer when all of them pass the filter;
    # else the best of a wider prefilter that do.
    for size in (limit, limit * PREFILTER):
        top = conn.execute(TOP_MATCHES, (expression, first, size)).fetchall()
        if not top:
            return []
        ids = padded([r[0] for r in top])
        sql = TOP_ROWS.format(marks=marks(len(ids)), where=where)
        rows = {r[0]: r for r in conn.execute(sql, (*ids, *params))}  # by o.id
        found = _passed(top, rows, limit)
        if len(found) >= limit or len(top) < size:
            break
    if len(found) >= limit or first == 0:
        return found
    # A busy index and a quiet project: rank every match of the project instead.
    sql = OBSERVATIONS.format(where=where)
    return [_observation(r, r[6]) for r in conn.execute(sql, (expression, *params, limit))]


def _passed(top: list[sqlite3.Row], rows: dict[int, sqlite3.Row], limit: int) -> list[Observation]:
    """The first ``limit`` of the ranked matches ``top`` whose rows passed the filter."""
    found: list[Observation] = []
    for rowid, score in top:
        if len(found) >= limit:
            break
        row = rows.get(rowid)
        if row is not None:
            found.append(_observation(row, score))
    return found


def _observation(row: sqlite3.Row, score: float) -> Observation:
    """From a row that starts with OBSERVATIONS' columns (id ... created_at)."""
    return Observation(int(row[0]), row[1], row[2], row[3], row[4], row[5], float(score))


def observation_bodies(conn: sqlite3.Connection, ids: list[int]) -> dict[int, str]:
    """Bodies are read only for the raw hits shown (they can be 16 KiB each)."""
    if not ids:
        return {}
    sql = BODIES.format(marks=",".join("?" * len(ids)))
    return {int(r["id"]): r["body"] for r in conn.execute(sql, ids)}


def evidence_stream(
    conn: sqlite3.Connection,
    observations: list[Observation],
    page_filter: PageFilter,
    *,
    limit: int,
    seen: PageRows,
) -> StreamResult:
    """Sessions ranked by their best matching turn; each carries its best few turns
    (their pages' rows go to ``seen``)."""
    turns: dict[tuple[str, str, str], list[Observation]] = {}
    for obs in observations:
        key = (obs.workspace, obs.project, f"sessions/{obs.session_id}.md")
        found = turns.setdefault(key, [])
        if len(found) < CHOICE:
            found.append(obs)
    if not turns:
        return StreamResult("evidence", [])
    where, params = page_filter.where()
    sql = SESSION_PAGES.format(rows=",".join(["(?,?,?)"] * len(turns)), where=where)
    keys = [part for key in turns for part in key]
    rows = conn.execute(sql, (*keys, *params)).fetchall()
    seen.keep(rows)
    page_of = {(r[WORKSPACE], r[PROJECT], r[PATH]): r[ID] for r in rows}
    hits: list[StreamHit] = []
    for key, found in turns.items():
        page_id = page_of.get(key)
        if page_id is not None:
            best = found[0]
            detail: dict[str, Any] = {
                "observation_id": best.id,
                "session_id": best.session_id,
                "turns": found[:TURNS],
                "candidates": found,
            }
            hits.append(StreamHit(page_id, best.score, detail, session=True))
    return StreamResult("evidence", hits[:limit])
