"""Full text over latest pages: BM25 (title weighted above body), and the CJK trigram index."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterable
from operator import attrgetter, itemgetter
from typing import Any

from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.query import PreparedQuery, normalise_title
from ai_memory.retrieval.rows import COLUMNS, ID, KIND, PATH, PROJECT, TITLE, WORKSPACE, PageRows
from ai_memory.retrieval.streams import StreamHit, StreamResult

FTS_PAGES = """
SELECT p.id, p.title, p.kind, bm25(pages_fts, ?, 1.0) AS score
FROM pages_fts JOIN pages p ON p.id = pages_fts.rowid
WHERE pages_fts MATCH ? AND {where}
ORDER BY score, p.workspace, p.project, p.path LIMIT ?
"""

# The fast path: rank inside the full-text index alone, then filter the best few.
# When the filter leaves too few of them, FTS_PAGES ranks every match instead.
FTS_TOP = """
SELECT p.id, p.title, p.kind, m.score FROM (
    SELECT rowid, bm25(pages_fts, ?, 1.0) AS score FROM pages_fts
    WHERE pages_fts MATCH ? AND rowid >= ? ORDER BY score, rowid LIMIT ?
) m JOIN pages p ON p.id = m.rowid
WHERE {where}
ORDER BY m.score, p.workspace, p.project, p.path LIMIT ?
"""
PREFILTER = 20

# Faster still: the best matches alone, then their pages by id. When all of them pass
# the filter and the next match scores strictly worse, they are what FTS_TOP returns
# (its ties go by identity, which only the page rows know); otherwise FTS_TOP runs.
TOP_MATCHES = """
SELECT rowid, bm25(pages_fts, ?, 1.0) AS score FROM pages_fts
WHERE pages_fts MATCH ? AND rowid >= ? ORDER BY score, rowid LIMIT ?
"""
# NOT INDEXED: by rowid, never by walking an index of the whole project. The whole
# rows of a hit (``COLUMNS``): the hits are built from them without reading them again.
TOP_PAGES = f"SELECT {COLUMNS} FROM pages p NOT INDEXED" + " WHERE p.id IN ({marks}) AND {where}"

# BM25 costs a lookup per matching row: a query matching more than WINDOW pages
# scores the newest WINDOW of them (FTS5 lists matches by rowid without scoring).
WINDOW_START = """
SELECT rowid FROM pages_fts WHERE pages_fts MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?
"""
WINDOW = 20_000

# A scope holding under this share of the pages is ranked by FTS_PAGES at once: it
# scores only the scope's matches, where the fast paths score every match first and
# then, finding too few of them in the scope, score them all again.
SELECTIVE = 0.5
# The ids of the scope's latest pages, one project at a time from the listing index
# (an OR of projects would walk the whole workspace).
SCOPE_IDS = "SELECT s.id FROM pages s WHERE s.workspace = ? AND s.project = ? AND s.is_latest = 1"
# Whether the scope holds at least that many: a row at that offset, the ones before it
# skipped inside the index (cheaper than counting them, and a scope is most often all).
SCOPE_REACHES = "{ids} LIMIT 1 OFFSET ?"
# Those matches alone: the scope's page ids (read from the index) drop the other
# projects' matches before their page rows are read, which was most of the work.
# The unary plus keeps SQLite from handing FTS5 the ids to look up one at a time.
FTS_SCOPED = """
SELECT p.id, p.title, p.kind, bm25(pages_fts, ?, 1.0) AS score
FROM pages_fts JOIN pages p ON p.id = pages_fts.rowid
WHERE pages_fts MATCH ? AND +pages_fts.rowid IN ({ids}) AND {where}
ORDER BY score, p.workspace, p.project, p.path LIMIT ?
"""

# A weak query (every word in most pages) has no BM25 signal: newest matches first,
# which FTS5 streams in rowid order and stops early.
FTS_RECENT = """
SELECT p.id, p.title, p.kind, 0.0 AS score
FROM pages_fts JOIN pages p ON p.id = pages_fts.rowid
WHERE pages_fts MATCH ? AND {where}
ORDER BY pages_fts.rowid DESC LIMIT ?
"""

CJK_MATCH = """
SELECT p.id, p.title, bm25(pages_cjk, ?, 1.0) AS score
FROM pages_cjk JOIN pages p ON p.id = pages_cjk.rowid
WHERE pages_cjk MATCH ? AND {where}
ORDER BY score, p.workspace, p.project, p.path LIMIT ?
"""

CJK_LIKE = """
SELECT p.id, p.title, 0.0 AS score
FROM pages_cjk JOIN pages p ON p.id = pages_cjk.rowid
WHERE ({like}) AND {where}
ORDER BY p.created_at DESC, p.workspace, p.project, p.path LIMIT ?
"""


def fts_stream(
    conn: sqlite3.Connection,
    query: PreparedQuery,
    page_filter: PageFilter,
    *,
    title_weight: float,
    limit: int,
    pages: int,
    seen: PageRows,
) -> StreamResult:
    """BM25 ranking; an exact title match goes first. Bad FTS5 syntax degrades to words.

    ``pages`` is ``PAGE_COUNT``, which the caller has read for the common words too;
    the rows of the best matches go to ``seen``."""
    if not query.fts:
        return StreamResult("fts", [])
    note = None
    if query.weak:
        where, params = page_filter.where()
        recent = conn.execute(FTS_RECENT.format(where=where), (query.fts, *params, limit))
        return StreamResult(
            "fts",
            [StreamHit(int(r["id"]), 0.0, session=r["kind"] == "session") for r in recent],
            note="every word is in most pages: newest matches first",
        )
    try:
        rows = _ranked(conn, query.fts, page_filter, title_weight, limit, pages, seen)
    except sqlite3.OperationalError as exc:
        if not query.fallback or query.fallback == query.fts:
            raise
        note = f"query syntax not understood ({exc}); searched its words instead"
        rows = _ranked(conn, query.fallback, page_filter, title_weight, limit, pages, seen)
    wanted = normalise_title(query.text)
    exact: list[StreamHit] = []
    other: list[StreamHit] = []
    for page_id, title, kind, score in rows:
        if normalise_title(title) == wanted:
            exact.append(
                StreamHit(page_id, score, {"exact_title": True}, session=kind == "session")
            )
        else:
            other.append(StreamHit(page_id, score, {}, session=kind == "session"))
    # Exact title matches first, each part by score (the rows come by score: no reordering).
    exact.sort(key=_SCORE)
    other.sort(key=_SCORE)
    return StreamResult("fts", exact + other, note=note)


Ranked = list[tuple[int, str, str, float]]  # page id, title, kind, BM25 score
_SCORE = attrgetter("score")


def _ranked(
    conn: sqlite3.Connection,
    expression: str,
    page_filter: PageFilter,
    weight: float,
    limit: int,
    pages: int,
    seen: PageRows,
) -> Ranked:
    where, params = page_filter.where()
    first = 0
    if pages > WINDOW:  # small: no window
        start = conn.execute(WINDOW_START, (expression, WINDOW - 1)).fetchone()
        first = int(start[0]) if start else 0
    elif _selective(conn, page_filter, pages):
        ids, scope = _scope_ids(page_filter)
        sql = FTS_SCOPED.format(ids=ids, where=where)
        found = conn.execute(sql, (weight, expression, *scope, *params, limit))
        return _found(found)
    rows = _best_few(conn, (weight, expression, first), where, params, limit, seen)
    if rows is None:
        found = conn.execute(
            FTS_TOP.format(where=where),
            (weight, expression, first, limit * PREFILTER, *params, limit),
        )
        rows = _found(found)
    if len(rows) >= limit:
        return rows
    # Few survived the filter: either there are few matches at all (then this is
    # cheap) or the filter is selective (another project, a kind): rank them all.
    found = conn.execute(FTS_PAGES.format(where=where), (weight, expression, *params, limit))
    return _found(found)


def _found(rows: Iterable[sqlite3.Row]) -> Ranked:
    """The rows of a statement that selects ``p.id, p.title, p.kind`` and a score."""
    return [(int(r[0]), r[1], r[2], float(r[3])) for r in rows]


def _selective(conn: sqlite3.Connection, page_filter: PageFilter, pages: int) -> bool:
    """Whether the search's projects hold a small share of every page version."""
    if not page_filter.scopes or not pages:
        return False
    ids, params = _scope_ids(page_filter)
    share = math.ceil(SELECTIVE * pages)  # an integer count is below the share iff below this
    reached = conn.execute(SCOPE_REACHES.format(ids=ids), (*params, share - 1)).fetchone()
    return reached is None


def _scope_ids(page_filter: PageFilter) -> tuple[str, list[str]]:
    """SCOPE_IDS for every project of the filter, and its parameters."""
    sql = " UNION ALL ".join(SCOPE_IDS for _ in page_filter.scopes)
    return sql, [name for s in page_filter.scopes for name in (s.workspace, s.project)]


def _best_few(
    conn: sqlite3.Connection,
    match: tuple[float, str, int],
    where: str,
    params: list[Any],
    limit: int,
    seen: PageRows,
) -> Ranked | None:
    """FTS_TOP's answer from the best matches and their pages, or None when they cannot tell.

    FTS_TOP keeps the best ``limit`` of the filtered matches by (score, identity).
    Past the first ``limit`` matches and the ones tied with the last of them, every
    match scores strictly worse; so when that many pass the filter they hold the
    answer, and the pages of the other matches need not be read.
    """
    widest = limit * PREFILTER
    for size in (2 * limit, widest):
        top = _through_ties(conn.execute(TOP_MATCHES, (*match, size)), limit)
        cut = min(limit, len(top))
        while cut < len(top) and top[cut][1] == top[cut - 1][1]:
            cut += 1
        if cut < len(top) or len(top) < size:
            break
    if not top:
        return []
    ids = padded([int(r[0]) for r in top[:cut]])
    sql = TOP_PAGES.format(marks=marks(len(ids)), where=where)
    pages = {r[ID]: r for r in conn.execute(sql, (*ids, *params))}
    seen.keep(pages.values())
    if len(pages) < limit and cut < len(top):
        return None  # the filter drops too many of them: FTS_TOP looks further
    chosen = []
    for i, score in top[:cut]:
        r = pages.get(int(i))
        if r is not None:  # FTS_TOP's order (score, identity), then the hit
            key = (float(score), r[WORKSPACE], r[PROJECT], r[PATH])
            chosen.append((key, (r[ID], r[TITLE], r[KIND])))
    chosen.sort(key=itemgetter(0))
    return [(*hit, order[0]) for order, hit in chosen[:limit]]


def _through_ties(matches: sqlite3.Cursor, limit: int) -> list[sqlite3.Row]:
    """The first ``limit`` matches, the ones tied with the last of them, and the next one.

    Past that one no match is looked at (each row fetched costs a step and a conversion),
    so the cut in the tied scores falls where it would over every row: the next match
    scores strictly worse, or there is none.
    """
    top = matches.fetchmany(limit)
    if len(top) < limit or not top:
        return top
    for row in matches:
        top.append(row)
        if row[1] != top[-2][1]:
            break
    return top


def cjk_stream(
    conn: sqlite3.Connection,
    query: PreparedQuery,
    page_filter: PageFilter,
    *,
    title_weight: float,
    limit: int,
) -> StreamResult:
    """Text without spaces: trigrams for runs of three or more characters, LIKE below that."""
    where, params = page_filter.where()
    hits: dict[int, StreamHit] = {}
    if query.cjk_match:
        rows = conn.execute(
            CJK_MATCH.format(where=where), (title_weight, query.cjk_match, *params, limit)
        ).fetchall()
        for row in rows:
            hits.setdefault(int(row["id"]), StreamHit(int(row["id"]), float(row["score"])))
    if query.cjk_like:
        one = "pages_cjk.title LIKE ? OR pages_cjk.body LIKE ?"
        like = " OR ".join(one for _ in query.cjk_like)
        patterns: list[str] = []
        for run in query.cjk_like:
            patterns += [f"%{run}%", f"%{run}%"]
        rows = conn.execute(
            CJK_LIKE.format(like=like, where=where), (*patterns, *params, limit)
        ).fetchall()
        for row in rows:
            hits.setdefault(int(row["id"]), StreamHit(int(row["id"]), 0.0))
    return StreamResult("cjk", list(hits.values())[:limit])
