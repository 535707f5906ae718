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
from ai_memory.retrieval.query import PreparedQuery
from ai_memory.retrieval.streams import StreamHit, StreamResult

OBSERVATIONS = """
SELECT o.id, o.workspace, o.project, o.session_id, o.kind, o.body, o.created_at,
    bm25(observations_fts) AS score
FROM observations_fts JOIN observations o ON o.id = observations_fts.rowid
WHERE observations_fts MATCH ? AND {where}
ORDER BY score LIMIT ?
"""

SESSION_PAGES = """
SELECT p.id, p.workspace, p.project, p.path FROM pages p
WHERE p.path IN ({marks}) AND {where}
"""


@dataclass(frozen=True, slots=True)
class Observation:
    id: int
    workspace: str
    project: str
    session_id: str
    kind: str
    body: str
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
    sql = OBSERVATIONS.format(where=" AND ".join(clauses) or "1")
    try:
        rows = conn.execute(sql, (query.fts, *params, limit)).fetchall()
    except sqlite3.OperationalError:
        if not query.fallback or query.fallback == query.fts:
            raise
        rows = conn.execute(sql, (query.fallback, *params, limit)).fetchall()
    return [
        Observation(
            int(r["id"]),
            r["workspace"],
            r["project"],
            r["session_id"],
            r["kind"],
            r["body"],
            r["created_at"],
            float(r["score"]),
        )
        for r in rows
    ]


def evidence_stream(
    conn: sqlite3.Connection,
    observations: list[Observation],
    page_filter: PageFilter,
    *,
    limit: int,
) -> StreamResult:
    best: dict[tuple[str, str, str], Observation] = {}
    for obs in observations:
        best.setdefault((obs.workspace, obs.project, f"sessions/{obs.session_id}.md"), obs)
    if not best:
        return StreamResult("evidence", [])
    paths = sorted({path for _, _, path in best})
    where, params = page_filter.where()
    sql = SESSION_PAGES.format(marks=",".join("?" * len(paths)), where=where)
    page_of: dict[tuple[str, str, str], int] = {
        (r["workspace"], r["project"], r["path"]): int(r["id"])
        for r in conn.execute(sql, (*paths, *params))
    }
    hits: list[StreamHit] = []
    for key, obs in best.items():
        page_id = page_of.get(key)
        if page_id is not None:
            detail: dict[str, Any] = {"observation_id": obs.id, "session_id": obs.session_id}
            hits.append(StreamHit(page_id, obs.score, detail))
    return StreamResult("evidence", hits[:limit])
