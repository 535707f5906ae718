"""Query latency and index size on a synthetic corpus (zero LLM).

    python benchmarks/bench_query.py [--sizes 10000 100000] [--observations 100000]

For each size: a fresh data dir gets N pages of ~300 words (Zipf-distributed
vocabulary, frontmatter entities, links to other pages) written through the
writer in large batches (index rows exactly as a page write makes them; no
markdown files, which queries never read), plus the observations, stored
through the real ingest path (sanitizer included). Then queries of 2-4 words
drawn from the pages run through the search function the HTTP route and
``memory_query`` call, and the script prints p50/p95 latency and the size of
the database.

Beside it, the floor: one raw FTS5 query on the same index and connection,
with the same MATCH expression the page stream runs (the query's content
words, the ones in over half of the pages dropped, as the search drops them),
``ORDER BY rank LIMIT 10`` inside the index, then the ten pages' rows with the
columns a result needs (identity, version, title, kind, tier and the body a
snippet is cut from). It does none of the rest: no observations, entities,
links or ``_global`` search, no fusion, authority, snippets or turns. The
script prints both, their ratio at p50 and the load average at the time.

The synthetic language's 100 most frequent words cover about
half of its text, as English stopwords do of English, and are configured as
its stopword list (``retrieval.stopwords``), as a deployment in another
language would.

With vectors (when the ``embeddings`` extra is installed): every page gets 4
chunk vectors. Embedding 100,000 pages with the local model takes hours, so
the chunk vectors are random unit vectors under the real model's name; each
query is embedded by the real model, so the figures include that cost.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.core.identity import Scope
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import Retriever
from ai_memory.retrieval.setup import build_retriever
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.wiki.document import build_document, complete_frontmatter

SCOPE = Scope.of(None, "bench")
STOPWORDS = 100
BATCH = 1000
WORDS = 300
VOCABULARY = 20_000
CHUNKS_PER_PAGE = 4
RAW_FTS = """
SELECT p.id, p.workspace, p.project, p.path, p.version, p.title, p.kind, p.tier, p.body
FROM (SELECT rowid FROM pages_fts WHERE pages_fts MATCH ? ORDER BY rank LIMIT 10) m
JOIN pages p ON p.id = m.rowid
"""
KINDS = ("concepts", "decisions", "gotchas", "procedures", "notes", "sessions")


def vocabulary(rng: random.Random) -> tuple[list[str], list[float]]:
    syllables = ["ka", "lo", "mi", "ne", "su", "ta", "ri", "po", "de", "van", "zen", "qu", "bor"]
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        words.setdefault("".join(rng.choices(syllables, k=rng.randint(2, 4))), None)
    weights = [1.0 / (rank + 1) for rank in range(VOCABULARY)]
    return list(words), weights


def page_texts(
    n: int, words: list[str], weights: list[float], rng: random.Random
) -> list[tuple[str, str, dict[str, Any]]]:
    cumulative = list(_accumulate(weights))
    out = []
    for i in range(n):
        body_words = rng.choices(words, cum_weights=cumulative, k=WORDS)
        folder = KINDS[i % len(KINDS)]
        links = " ".join(
            f"[[{KINDS[j % len(KINDS)]}/p{j}.md]]"
            for j in rng.sample(range(n), k=min(3, n))
            if KINDS[j % len(KINDS)] != "sessions"
        )
        body = f"# {' '.join(body_words[:4])}\n\n{' '.join(body_words)}\n\nSee {links}.\n"
        entities = rng.sample(words[200:2000], k=3)
        # Session pages carry the ids the observations use, so evidence has pages to vote for.
        name = f"s{i // len(KINDS)}" if folder == "sessions" else f"p{i}"
        out.append((f"{folder}/{name}.md", body, {"entities": entities}))
    return out


def _accumulate(values: list[float]) -> list[float]:
    total, out = 0.0, []
    for value in values:
        total += value
        out.append(total)
    return out


def write_pages(runtime: Runtime, corpus: list[tuple[str, str, dict[str, Any]]]) -> None:
    now = now_iso()
    for start in range(0, len(corpus), BATCH):
        docs = []
        for path, body, meta in corpus[start : start + BATCH]:
            ref = SCOPE.page(path)
            docs.append((ref, build_document(ref, complete_frontmatter(ref, meta, body), body)))

        def command(conn: sqlite3.Connection, docs: list[Any] = docs) -> None:
            pages.ensure_project(conn, SCOPE, now)
            for ref, doc in docs:
                pages.insert_version(conn, ref, doc, now=now, actor="bench")

        runtime.writer.call(command, timeout=None)


def write_observations(
    runtime: Runtime, n: int, words: list[str], weights: list[float], rng: random.Random
) -> None:
    from ai_memory.hooks.ingest import parse_event, store_command
    from ai_memory.hooks.sanitize import Sanitizer

    sanitizer = Sanitizer()
    cumulative = list(_accumulate(weights))
    for start in range(0, n, BATCH):
        events = []
        for i in range(start, min(n, start + BATCH)):
            params = {
                "event": "UserPromptSubmit",
                "agent": "claude-code",
                "project": SCOPE.project,
                "session_id": f"s{i // 100}",
            }
            prompt = " ".join(rng.choices(words, cum_weights=cumulative, k=30))
            events.append(parse_event(params, {"prompt": prompt}, sanitizer))
        runtime.writer.call(store_command(events), timeout=None)


def write_random_vectors(runtime: Runtime, dim: int, model: str, seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    ids = runtime.readers.read(
        lambda c: [r[0] for r in c.execute("SELECT id FROM pages WHERE is_latest = 1")]
    )
    now = now_iso()
    for start in range(0, len(ids), BATCH):
        rows = []
        for page_id in ids[start : start + BATCH]:
            matrix = rng.standard_normal((CHUNKS_PER_PAGE, dim)).astype(np.float32)
            matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
            for chunk, row in enumerate(matrix.astype(np.float16)):
                rows.append(
                    (
                        page_id,
                        SCOPE.workspace,
                        SCOPE.project,
                        chunk,
                        "local",
                        model,
                        dim,
                        row.tobytes(),
                        now,
                    )
                )

        def command(conn: sqlite3.Connection, rows: list[Any] = rows) -> None:
            conn.executemany(
                "INSERT INTO page_vectors (page_id, workspace, project, chunk, provider, model, "
                "dim, vector, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )

        runtime.writer.call(command, timeout=None)


def queries(corpus: list[tuple[str, str, dict[str, Any]]], n: int, rng: random.Random) -> list[str]:
    out = []
    for _ in range(n):
        _, body, meta = rng.choice(corpus)
        words = body.split("\n\n")[1].split()
        picked = rng.sample(words, k=rng.randint(2, 4))
        if rng.random() < 0.25:
            picked.append(rng.choice(meta["entities"]))
        out.append(" ".join(picked))
    return out


def measure(run: Callable[[str], Any], texts: list[str]) -> tuple[float, float]:
    for text in texts[:10]:
        run(text)  # warm caches (and load the vector matrix)
    times = []
    for text in texts:
        started = time.perf_counter()
        run(text)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return statistics.median(times), times[int(0.95 * (len(times) - 1))]


def db_size(config: Config, runtime: Runtime) -> float:
    runtime.writer.call(lambda c: None)
    conn = sqlite3.connect(config.db_path)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return config.db_path.stat().st_size / 1e6


def _settings(words: list[str]) -> dict[str, str]:
    return {"AI_MEMORY_RETRIEVAL__STOPWORDS": json.dumps(words[:STOPWORDS])}


def run_size(size: int, observations: int, n_queries: int, vectors: bool) -> None:
    rng = random.Random(size)
    with tempfile.TemporaryDirectory(prefix="bench-query-") as tmp:
        root = Path(tmp) / "data"
        initialise(Config.load(root, {}))
        words, weights = vocabulary(random.Random(size))
        config = Config.load(root, _settings(words))
        runtime = Runtime.start(config, reconcile_wiki=False)
        try:
            started = time.perf_counter()
            corpus = page_texts(size, words, weights, rng)
            write_pages(runtime, corpus)
            write_observations(runtime, observations, words, weights, rng)
            built = time.perf_counter() - started
            texts = queries(corpus, n_queries, rng)
            size_mb = db_size(config, runtime)
            print(f"\n## {size:,} pages, {observations:,} observations (built in {built:.0f} s)")
            print(f"index size: {size_mb:.0f} MB ({size_mb * 1e6 / size / 1024:.1f} KiB/page)")
            p50, p95 = measure(_search(runtime.retrieval), texts)
            print(f"without vectors: p50 {p50:.1f} ms, p95 {p95:.1f} ms  ({len(texts)} queries)")
            raw = _raw_fts(runtime.retrieval)
            raw50, raw95 = runtime.readers.read(lambda conn: raw(conn, texts))
            print(
                f"raw FTS5 MATCH ... ORDER BY rank LIMIT 10 + rows: p50 {raw50:.2f} ms, "
                f"p95 {raw95:.2f} ms; full search / raw at p50: {p50 / raw50:.1f}x "
                f"(target 2x{'' if p50 <= 2 * raw50 else ': not met'}); "
                f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
            )
            if size >= 100_000:
                print(f"p95 target 100 ms: {'met' if p95 <= 100 else 'not met'}")
            if vectors:
                _with_vectors(config, runtime, texts, size)
        finally:
            runtime.stop()


def _with_vectors(config: Config, runtime: Runtime, texts: list[str], size: int) -> None:
    words, _ = vocabulary(random.Random(size))
    env = {**_settings(words), "AI_MEMORY_EMBEDDINGS__PROVIDER": "local"}
    local = Config.load(config.data_dir, env)
    retriever = build_retriever(local, runtime.readers, runtime.writer, background=False)
    assert retriever.index is not None
    embedder = retriever.index.embedder
    write_random_vectors(runtime, embedder.dim, embedder.model, size)
    size_mb = db_size(config, runtime)
    chunks = size * CHUNKS_PER_PAGE
    print(f"index size with {chunks:,} chunk vectors: {size_mb:.0f} MB")
    started = time.perf_counter()
    retriever.index.refresh_now(runtime.readers)
    print(f"vector matrix load: {time.perf_counter() - started:.1f} s")
    p50, p95 = measure(_search(retriever), texts)
    print(f"with vectors:    p50 {p50:.1f} ms, p95 {p95:.1f} ms  (query embedding included)")
    started = time.perf_counter()
    for text in texts[:50]:
        embedder.embed([text])
    print(f"  of which query embedding: {(time.perf_counter() - started) * 1000 / 50:.1f} ms")


def _raw_fts(retriever: Retriever) -> Callable[[sqlite3.Connection, list[str]], Any]:
    """The floor: the page stream's own MATCH expressions (made before the clock
    starts), each ranked by FTS5 with its ten rows read."""
    from ai_memory.retrieval.query import prepare
    from ai_memory.retrieval.terms import page_count

    engine = retriever.engine

    def run(conn: sqlite3.Connection, texts: list[str]) -> tuple[float, float]:
        expressions = {}
        total = page_count(conn)
        for text in texts:
            prepared = prepare(text, engine.stopwords)
            common = engine.terms.common(conn, prepared.words, total)
            expressions[text] = prepared.without(common).fts
        return measure(lambda text: conn.execute(RAW_FTS, (expressions[text],)).fetchall(), texts)

    return run


def _search(retriever: Retriever) -> Callable[[str], Any]:
    def run(text: str) -> Any:
        # Hits noted for reinforcement as the server's search notes them.
        return retriever.search_sync(SearchRequest(query=text, project=SCOPE.project), defer=True)

    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--observations", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-vectors", action="store_true")
    parser.add_argument(
        "--basic-memory",
        metavar="PYTHON",
        help="also time basic-memory (the python of its own venv) on the same notes and queries",
    )
    parser.add_argument("--side-size", type=int, default=1000, help="notes in the side-by-side")
    args = parser.parse_args(argv)
    if args.basic_memory:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from benchmarks.side_by_side import run as side_by_side

        rng = random.Random(args.side_size)
        words, weights = vocabulary(random.Random(args.side_size))
        corpus = page_texts(args.side_size, words, weights, rng)
        side_by_side(args.basic_memory, corpus, queries(corpus, args.queries, rng))
        return 0
    from ai_memory.llm.embeddings import available

    vectors = not args.no_vectors and available()
    for size in args.sizes:
        run_size(size, args.observations, args.queries, vectors)
    return 0


if __name__ == "__main__":
    sys.exit(main())
