"""Dropping query terms too common to rank anything.

BM25 gives a term found in more than half of the documents an IDF of about
zero (FTS5 clamps it to 1e-6), so it adds nothing to any score, yet matching
it makes FTS5 score and sort most of the index. Such terms are dropped from
a bare-words query when other terms remain. Document counts come from the
``pages_fts_vocab`` view; query words are stemmed the way the index stems
them by an in-memory FTS5 table with the same tokenizer.
"""

from __future__ import annotations

import sqlite3
import threading

from ai_memory.store.migrations import PAGE_TOKENIZER

COMMON_SHARE = 0.5
MIN_PAGES = 50  # below this, counts say little; keep every term

PAGE_COUNT = "SELECT max(id) FROM pages"  # every version: an overestimate, so a safe one
TERM_DOCS = "SELECT term, doc FROM pages_fts_vocab WHERE term IN ({marks})"


class TermStats:
    """Holds the stemming table; safe to share between the reader threads."""

    def __init__(self) -> None:
        self._conn = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        self._conn.execute(f'CREATE VIRTUAL TABLE s USING fts5(w, tokenize="{PAGE_TOKENIZER}")')
        self._conn.execute("CREATE VIRTUAL TABLE sv USING fts5vocab(s, 'instance')")
        self._lock = threading.Lock()

    def stems(self, words: tuple[str, ...]) -> list[tuple[str, str]]:
        """(word, stem) for every word that yields exactly one index term."""
        with self._lock:
            self._conn.execute("DELETE FROM s")
            self._conn.executemany("INSERT INTO s(rowid, w) VALUES (?, ?)", enumerate(words, 1))
            rows = self._conn.execute("SELECT doc, term FROM sv").fetchall()
        by_doc: dict[int, list[str]] = {}
        for doc, term in rows:
            by_doc.setdefault(int(doc), []).append(term)
        return [
            (word, by_doc[i][0]) for i, word in enumerate(words, 1) if len(by_doc.get(i, [])) == 1
        ]

    def common(self, conn: sqlite3.Connection, words: tuple[str, ...]) -> set[str]:
        """The words found in more than half of the pages."""
        if len(words) < 2:
            return set()
        total = conn.execute(PAGE_COUNT).fetchone()[0] or 0
        if total < MIN_PAGES:
            return set()
        stems = self.stems(words)
        if not stems:
            return set()
        unique = sorted({stem for _, stem in stems})
        docs = {
            term: int(n)
            for term, n in conn.execute(TERM_DOCS.format(marks=",".join("?" * len(unique))), unique)
        }
        return {word for word, stem in stems if docs.get(stem, 0) > COMMON_SHARE * total}
