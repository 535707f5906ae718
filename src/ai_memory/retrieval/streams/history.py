"""Older versions: superseded ones (on request) and the ones that were latest at ``as_of``.

The full-text index holds latest versions only, so older versions are scored
here with a plain term-frequency measure over a bounded, recent set.
"""

from __future__ import annotations

import math
import re
import sqlite3
from collections import Counter

from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.query import PreparedQuery
from ai_memory.retrieval.streams import StreamHit, StreamResult

MAX_VERSIONS = 5000

OLDER_VERSIONS = """
SELECT p.id, p.path, p.version, p.title, p.body FROM pages p
WHERE {where} AND p.deleted_at IS NULL
ORDER BY p.id DESC LIMIT ?
"""

# Versions that were latest at a time T: written by T, and not replaced or deleted by T.
LATEST_AT = """
SELECT p.id, p.path, p.version, p.title, p.body FROM pages p
WHERE {where} AND (p.deleted_at IS NULL OR p.deleted_at > ?)
    AND NOT EXISTS (
        SELECT 1 FROM pages n WHERE n.workspace = p.workspace AND n.project = p.project
            AND n.path = p.path AND n.version > p.version AND n.created_at <= ?
    )
ORDER BY p.id DESC LIMIT ?
"""

_WORD = re.compile(r"\w+")
_SUFFIXES = ("ations", "ation", "ings", "ing", "edly", "ed", "ies", "es", "ly", "s")


def stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def history_stream(
    conn: sqlite3.Connection, query: PreparedQuery, page_filter: PageFilter, *, limit: int
) -> StreamResult:
    if not query.words:
        return StreamResult("history", [])
    where, params = page_filter.where(latest=False)
    if page_filter.as_of:
        sql = LATEST_AT.format(where=where)
        args = (*params, page_filter.as_of, page_filter.as_of, MAX_VERSIONS)
    else:
        sql = OLDER_VERSIONS.format(where=where)
        args = (*params, MAX_VERSIONS)
    terms = {stem(w) for word in query.words for w in _WORD.findall(word)}
    scored: list[tuple[float, str, int, StreamHit]] = []
    for row in conn.execute(sql, args):
        score = _score(terms, row["title"], row["body"])
        if score > 0:
            hit = StreamHit(int(row["id"]), score, {"older_version": True})
            scored.append((-score, row["path"], -int(row["version"]), hit))
    scored.sort(key=lambda s: s[:3])
    return StreamResult("history", [s[3] for s in scored[:limit]])


def _score(terms: set[str], title: str, body: str) -> float:
    title_counts = Counter(stem(w) for w in _WORD.findall(title.lower()))
    body_counts = Counter(stem(w) for w in _WORD.findall(body.lower()))
    score = 0.0
    for term in terms:
        tf = body_counts.get(term, 0) + 3 * title_counts.get(term, 0)
        if tf:
            score += 1.0 + math.log(tf)
    return score
