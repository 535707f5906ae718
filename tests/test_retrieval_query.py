"""Query preparation: what an agent types becomes a safe FTS5 expression."""

from __future__ import annotations

import random
import sqlite3

import pytest

from ai_memory.retrieval.query import _words, normalise_title, prepare
from ai_memory.retrieval.stopwords import ENGLISH
from ai_memory.store.migrations import PAGE_TOKENIZER


def test_bare_query_drops_stopwords_and_ors_the_rest() -> None:
    query = prepare("What is the database migration plan?", ENGLISH)
    assert query.words == ("database", "migration", "plan")
    assert query.fts == '"database" OR "migration" OR "plan"'
    assert query.mode == "words"


def test_a_query_of_only_stopwords_keeps_them() -> None:
    query = prepare("what is this", ENGLISH)
    assert query.words == ("what", "is", "this")


def test_identifiers_and_paths_stay_whole_and_edge_punctuation_goes() -> None:
    query = prepare("Why does src/ai_memory/store.py call fts_text.", ENGLISH)
    assert "src/ai_memory/store.py" in query.words
    assert "fts_text" in query.words


def test_explicit_syntax_is_kept_with_a_word_fallback() -> None:
    query = prepare('"group commit" AND writer', ENGLISH)
    assert query.mode == "syntax"
    assert query.fts == '"group commit" AND writer'
    assert query.fallback == '"group" OR "commit" OR "writer"'


def test_cjk_runs_become_trigrams_or_like_patterns() -> None:
    long = prepare("数据库迁移", ENGLISH)
    assert long.cjk_match == '"数据库" OR "据库迁" OR "库迁移"'
    assert long.fts == ""
    short = prepare("迁移 plan", ENGLISH)
    assert short.cjk_like == ("迁移",)
    assert short.words == ("plan",)


@pytest.mark.parametrize(
    "text",
    ["hello world", "c++ and c#", "don't stop", "NEAR NOT", "x" * 300, "ÄÖÜ café", "a-b-c", "___"],
)
def test_bare_queries_always_parse(text: str) -> None:
    """Whatever is typed, the words-mode expression is valid FTS5."""
    conn = sqlite3.connect(":memory:")
    conn.execute(f'CREATE VIRTUAL TABLE t USING fts5(body, tokenize="{PAGE_TOKENIZER}")')
    query = prepare(text, ENGLISH)
    if query.mode == "words" and query.fts:
        conn.execute("SELECT * FROM t WHERE t MATCH ?", (query.fts,)).fetchall()


def test_a_plain_title_normalises_as_the_tokenizer_reads_it() -> None:
    """Titles of letters, digits and spaces skip the tokenizer: the words must be the same."""
    rng = random.Random(5)
    parts = ["a", "B", "s", "t", "ll", "Re", "9", " ", "  ", "x1", "_", "-", ".", "é", "'", "İ"]
    for _ in range(20_000):
        text = "".join(rng.choice(parts) for _ in range(rng.randint(0, 8)))
        assert normalise_title(text) == " ".join(_words(text)), repr(text)
    assert normalise_title("Don t  Panic S") == "don panic"
