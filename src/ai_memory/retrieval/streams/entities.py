"""Entity matches: query words and phrases against the normalised frontmatter entities."""

from __future__ import annotations

import sqlite3

from ai_memory.core.text import normalise_entity
from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.query import PreparedQuery
from ai_memory.retrieval.rows import COLUMNS, EXPIRES_AT, ID, PATH, PROJECT, WORKSPACE, PageRows
from ai_memory.retrieval.streams import StreamHit, StreamResult

# CROSS JOIN keeps ``entities`` the outer loop: left to itself, the planner may walk every
# latest page through the listing index and look up each one's entities (22 ms at 10,000
# pages, for a table that is often empty) instead of the few rows the words name.
# Whole rows (``COLUMNS``): the hits are built from them without reading them again.
ENTITY_PAGES = (
    f"SELECT {COLUMNS}, e.norm"
    + """
FROM entities e CROSS JOIN pages p ON p.id = e.page_id
WHERE e.norm IN ({marks}) AND {scope} AND {where}
"""
)
NORM = EXPIRES_AT + 1  # e.norm, after COLUMNS
MAX_PHRASE = 4
MAX_PHRASES = 200


def phrases(query: PreparedQuery) -> list[str]:
    """Every run of 1-4 consecutive words, plus the whole query, normalised."""
    words = query.all_words
    found: dict[str, None] = {}
    whole = normalise_entity(query.text.strip(" ?!.,;:"))
    if whole:
        found[whole] = None
    for size in range(MAX_PHRASE, 0, -1):
        for start in range(len(words) - size + 1):
            gram = normalise_entity(" ".join(words[start : start + size]))
            if size > 1 or gram in query.words:
                found.setdefault(gram, None)
    return list(found)[:MAX_PHRASES]


def entity_stream(
    conn: sqlite3.Connection,
    query: PreparedQuery,
    page_filter: PageFilter,
    *,
    limit: int,
    seen: PageRows,
) -> StreamResult:
    """Pages ranked by how many query words their matched entities cover (their rows
    go to ``seen``)."""
    candidates = phrases(query)
    if not candidates:
        return StreamResult("entities", [])
    where, params = page_filter.where()
    # The entity index leads with (workspace, project): name them on ``e`` too.
    scope, scope_params = page_filter.scope_clause("e")
    listed = padded(candidates)
    sql = ENTITY_PAGES.format(
        marks=marks(len(listed)), scope=" AND ".join(scope) or "1", where=where
    )
    matched: dict[int, list[str]] = {}
    identity: dict[int, tuple[str, str, str]] = {}
    rows = conn.execute(sql, (*listed, *scope_params, *params)).fetchall()
    seen.keep(rows)
    for row in rows:
        page_id = row[ID]
        matched.setdefault(page_id, []).append(row[NORM])
        identity[page_id] = (row[WORKSPACE], row[PROJECT], row[PATH])
    hits = [
        StreamHit(
            page_id,
            float(sum(len(n.split()) for n in set(names))),
            {"entities": sorted(set(names))},
        )
        for page_id, names in matched.items()
    ]
    # Ties go by identity: page ids and row order are not stable across a reindex.
    hits.sort(key=lambda hit: (-hit.score, identity[hit.page_id]))
    return StreamResult("entities", hits[:limit])
