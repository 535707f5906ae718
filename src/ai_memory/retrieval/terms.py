"""Query words too common to rank anything.

BM25 gives a term found in more than half of the documents an IDF of about
zero (FTS5 clamps it to 1e-6), so it adds nothing to any score, yet matching
it makes FTS5 score and sort most of the index. Such words are dropped from
a bare-words query when other words remain; when none remain, the query is
"weak" and the full-text stream lists its matches newest first instead of
scoring them all. Document counts come from the ``pages_fts_vocab`` view
(cached for a while: counting a common term's rows is not free); query words
are stemmed the way the index stems them, by an in-memory FTS5 table with the
same tokenizer.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable

from ai_memory.store.migrations import PAGE_TOKENIZER

COMMON_SHARE = 0.5
MIN_PAGES = 50  # below this, counts say little; keep every term
CACHE_TTL_S = 300.0
CACHE_MAX = 50_000

PAGE_COUNT = "SELECT max(id) FROM pages"  # every version: an overestimate, so a safe one
TERM_DOCS = "SELECT term, doc FROM pages_fts_vocab WHERE term IN ({marks})"


class TermStats:
    """Holds the stemming table and the count cache; shared by the reader threads."""

    def __init__(self, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.monotonic = monotonic
        self._docs: dict[str, tuple[int, float]] = {}
        self._stems: dict[str, str | None] = {}
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        # Contentless: its terms are all that is read, and 'delete-all' empties it at once
        # (a DELETE of a table that keeps its text re-tokenizes each row to remove it).
        self._conn.execute(
            f"CREATE VIRTUAL TABLE s USING fts5(w, tokenize=\"{PAGE_TOKENIZER}\", content='')"
        )
        self._conn.execute("CREATE VIRTUAL TABLE sv USING fts5vocab(s, 'instance')")
        self._lock = threading.Lock()

    def stems(self, words: tuple[str, ...]) -> list[tuple[str, str]]:
        """(word, stem) for every word that yields exactly one index term.

        A word's stem never changes: each is worked out once, then remembered.
        """
        with self._lock:
            missing = [w for w in dict.fromkeys(words) if w not in self._stems]
            if missing:
                self._stems.update(self._stem(missing))
            known = [(word, self._stems[word]) for word in words]
        return [(word, stem) for word, stem in known if stem is not None]

    def _stem(self, words: list[str]) -> dict[str, str | None]:
        self._conn.execute("INSERT INTO s(s) VALUES ('delete-all')")
        self._conn.executemany("INSERT INTO s(rowid, w) VALUES (?, ?)", enumerate(words, 1))
        by_doc: dict[int, list[str]] = {}
        for doc, term in self._conn.execute("SELECT doc, term FROM sv"):
            by_doc.setdefault(int(doc), []).append(term)
        if len(self._stems) > CACHE_MAX:
            self._stems.clear()
        found = {i: terms for i, terms in by_doc.items() if len(terms) == 1}
        return {word: found[i][0] if i in found else None for i, word in enumerate(words, 1)}

    def common(self, conn: sqlite3.Connection, words: tuple[str, ...], total: int) -> set[str]:
        """The words found in more than half of the ``total`` pages (see ``page_count``)."""
        if not words or total < MIN_PAGES:
            return set()
        stems = self.stems(words)
        if not stems:
            return set()
        docs = self._counts(conn, sorted({stem for _, stem in stems}))
        return {word for word, stem in stems if docs.get(stem, 0) > COMMON_SHARE * total}

    def _counts(self, conn: sqlite3.Connection, terms: list[str]) -> dict[str, int]:
        now = self.monotonic()
        with self._lock:
            cached = {t: self._docs.get(t) for t in terms}
        known = {t: e[0] for t, e in cached.items() if e is not None and now - e[1] < CACHE_TTL_S}
        missing = [t for t in terms if t not in known]
        if missing:
            marks = ",".join("?" * len(missing))
            found = {t: int(n) for t, n in conn.execute(TERM_DOCS.format(marks=marks), missing)}
            fresh = {t: found.get(t, 0) for t in missing}
            with self._lock:
                if len(self._docs) > CACHE_MAX:
                    self._docs.clear()
                self._docs.update({t: (c, now) for t, c in fresh.items()})
            known.update(fresh)
        return known


def page_count(conn: sqlite3.Connection) -> int:
    """``PAGE_COUNT``: read once per search, for the common words and the page stream."""
    return int(conn.execute(PAGE_COUNT).fetchone()[0] or 0)
