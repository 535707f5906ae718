"""The search's fast paths give what the single statements they stand in for gave.

Full text and turns are ranked inside the index and only the best few rows are
read; snippets and the turns holding a word are found with ``str.find`` instead
of a pattern per query. Each is checked here against the plain form it replaces,
on a real index with many BM25 ties, two projects (so the scope filter drops
matches) and headings, so a faster search can never be a different one.
"""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.core.identity import Scope
from ai_memory.hooks.ingest import parse_event, store_command
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval import snippets as s
from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.query import prepare
from ai_memory.retrieval.rows import PageRows
from ai_memory.retrieval.stopwords import ENGLISH
from ai_memory.retrieval.streams import evidence, lexical
from ai_memory.retrieval.terms import page_count
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.wiki.document import build_document, complete_frontmatter

MAIN, OTHER = Scope.of(None, "alpha"), Scope.of(None, "beta")
# The bulk of the pages: beside it the two projects above are a small share, so a
# search of them takes the path that ranks only their own matches.
BULK = Scope.of(None, "gamma")
PAGES = {MAIN: 120, OTHER: 120, BULK: 360}
WORDS = [
    "queue",
    "worker",
    "refund",
    "rounding",
    "lint",
    "cache",
    "deploy",
    "schema",
    "retry",
    "token",
    "index",
    "auth",
]
FOLDERS = ["notes", "decisions", "gotchas", "procedures", "concepts", "sessions"]
LIMIT = 5  # small, so the best few are often cut inside a run of tied scores

# What the two-step read of the best turns replaces: one statement, joined.
OBSERVATIONS_TOP = """
SELECT o.id, o.workspace, o.project, o.session_id, o.kind, o.created_at, m.score
FROM (
    SELECT rowid, bm25(observations_fts) AS score FROM observations_fts
    WHERE observations_fts MATCH ? AND rowid >= ? ORDER BY score, rowid LIMIT ?
) m JOIN observations o ON o.id = m.rowid
WHERE {where}
ORDER BY m.score, o.id LIMIT ?
"""


def body(rng: random.Random, i: int) -> str:
    """Template text: many pages share word counts, so many BM25 scores tie."""
    words = " ".join(rng.choice(WORDS) for _ in range(rng.choice([3, 3, 3, 6])))
    heading = "# Heading words\n\n" if i % 3 == 0 else ""
    return f"{heading}Some {words} text.\n##\n{rng.choice(WORDS)} tail\n"


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    root = tmp_path_factory.mktemp("fast") / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}), reconcile_wiki=False)
    rng = random.Random(5)
    now = now_iso()

    def write(conn: sqlite3.Connection) -> None:
        for scope, count in PAGES.items():
            pages.ensure_project(conn, scope, now)
            for i in range(count):
                ref = scope.page(f"{FOLDERS[i % len(FOLDERS)]}/p{i}.md")
                text = body(rng, i)
                doc = build_document(ref, complete_frontmatter(ref, {}, text), text)
                pages.insert_version(conn, ref, doc, now=now, actor="test")

    runtime.writer.call(write)
    sanitizer = Sanitizer()
    events = [
        parse_event(
            {
                "event": "UserPromptSubmit",
                "agent": "claude-code",
                "project": (MAIN if i % 3 else OTHER).project,
                "session_id": f"s{i % 9}",
            },
            {"prompt": " ".join(rng.choice(WORDS) for _ in range(rng.choice([2, 2, 4])))},
            sanitizer,
        )
        for i in range(400)
    ]
    runtime.writer.call(store_command(events))
    try:
        yield runtime
    finally:
        runtime.stop()


def queries() -> list[str]:
    rng = random.Random(11)
    return [" ".join(rng.sample(WORDS, k=rng.randint(1, 3))) for _ in range(40)]


def page_filter(scopes: tuple[Scope, ...] = (MAIN,), **extra: Any) -> PageFilter:
    return PageFilter(scopes=scopes, now=now_iso(), **extra)


FILTERS = [
    page_filter(),
    page_filter(kind="decision"),
    page_filter((MAIN, OTHER)),
    page_filter((BULK,)),
    page_filter(()),
]


def reference_pages(
    conn: sqlite3.Connection, expression: str, where: str, params: list[Any], *, every: bool
) -> list[tuple[int, str, str, float]]:
    """What the search ranks: ``every`` match of a small scope (FTS_PAGES), else the
    best few of every project (FTS_TOP), or every match when too few of them pass."""
    rows = (
        []
        if every
        else conn.execute(
            lexical.FTS_TOP.format(where=where),
            (4.0, expression, 0, LIMIT * lexical.PREFILTER, *params, LIMIT),
        ).fetchall()
    )
    if every or len(rows) < LIMIT:
        rows = conn.execute(
            lexical.FTS_PAGES.format(where=where), (4.0, expression, *params, LIMIT)
        ).fetchall()
    return [(int(r["id"]), r["title"], r["kind"], float(r["score"])) for r in rows]


def test_page_text_reads_only_the_best_few_and_ranks_as_the_joined_statement(
    index: Runtime,
) -> None:
    def check(conn: sqlite3.Connection) -> int:
        ties = 0
        total = page_count(conn)
        for text in queries():
            expression = prepare(text, ENGLISH).fts
            for f in FILTERS:
                where, params = f.where()
                got = lexical._ranked(conn, expression, f, 4.0, LIMIT, total, PageRows())
                every = lexical._selective(conn, f, total)
                assert got == reference_pages(conn, expression, where, params, every=every), (
                    text,
                    f,
                )
                scores = [s for _, _, _, s in got]
                ties += len(scores) != len(set(scores))
        return ties

    assert index.readers.read(check) > 0  # the cut fell inside tied scores

    def paths(conn: sqlite3.Connection) -> list[bool]:
        total = page_count(conn)
        return [lexical._selective(conn, f, total) for f in FILTERS]

    # Both ways of ranking were checked: a small share of the pages, and the rest.
    assert index.readers.read(paths) == [True, True, True, False, False]


def test_turns_read_only_the_best_few_and_rank_as_the_joined_statement(index: Runtime) -> None:
    def check(conn: sqlite3.Connection) -> None:
        for text in queries():
            expression = prepare(text, ENGLISH).fts
            for f in FILTERS:
                clauses, params = f.scope_clause("o")
                where = " AND ".join(clauses) or "1"
                for limit in (3, 10, 60):
                    got = evidence._ranked(conn, expression, where, params, limit)
                    sql = OBSERVATIONS_TOP.format(where=where)
                    args = (expression, 0, limit * evidence.PREFILTER, *params, limit)
                    want = [tuple(r) for r in conn.execute(sql, args)]
                    found = [
                        (o.id, o.workspace, o.project, o.session_id, o.kind, o.created_at, o.score)
                        for o in got
                    ]
                    assert found == want, (text, f, limit)

    index.readers.read(check)


def test_snippets_and_turn_choice_find_the_words_the_patterns_found() -> None:
    rng = random.Random(3)
    alphabet = ["queue", "Queue-x", "re.try", "_lint", "#", "##", "\n", " ", "é", "İi", "a"]
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) + rng.choice([" ", "", "\n"]) for _ in range(30))
        terms = rng.sample(["queue", "retry", "re.tr", "lint", "_lint", "é", "ii", "-x"], k=2)
        lowered = re.sub(r"^#+\s.*$", " ", text, flags=re.MULTILINE)
        assert s._without_headings(text) == lowered, repr(text)
        stems = sorted({t[: s.STEM] for t in terms}, key=len, reverse=True)
        pattern = re.compile(r"(?<!\w)(" + "|".join(re.escape(x) for x in stems) + ")")
        found = [(m.start(), m.group(1)) for m in pattern.finditer(lowered.lower())]
        assert s._matches(lowered.lower(), stems) == found, (repr(text), stems)
        for stem in stems:  # which turns hold a query word (turn_choice)
            held = re.search(r"(?<!\w)" + re.escape(stem), lowered.lower()) is not None
            assert s.starts_a_word(lowered.lower(), stem) == held, (repr(text), stem)
