"""A full reindex changes no ranking: every stream breaks ties by page identity.

A reindex rewrites every derived row (full text, links, entities) in file-scan
order, not in the order the pages were written; a stream that lists tied
candidates in row order would rank them differently afterwards.
"""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path
from typing import Any

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search
from ai_memory.runtime import Runtime

P = Scope.of(None, "alpha")
PAGES = 1000
TOPICS = ["queue", "refund", "lint", "cache", "deploy", "schema", "retry", "token", "index", "auth"]
ACTIONS = ["worker", "rounding", "rule", "eviction", "rollback", "migration", "backoff", "expiry"]
FOLDERS = ["notes", "decisions", "gotchas", "procedures", "concepts", "sessions"]
QUERIES = [
    "queue worker",
    "refund rounding",
    "lint rule",
    "cache eviction",
    "deploy rollback",
    "schema migration",
    "retry backoff",
    "token expiry",
    "index",
    "auth",
    "queue",
    "rounding decision",
    "worker backoff",
    "eviction rollback migration",
    "topic 7",
    "page 123",
    "refund queue cache",
    "lint token auth",
    "schema index retry",
    "shared words everywhere",
    "Kestrel",
    "kestrel owl",
]


def path_of(i: int) -> str:
    return f"{FOLDERS[i % len(FOLDERS)]}/p{i}.md"


def write_wiki(runtime: Runtime) -> None:
    """Pages of template text (many BM25 ties), links between them, shared entities.

    They are written in shuffled order, so their rows (and link rows) are not in
    the file-scan order a reindex rebuilds them in.
    """
    rng = random.Random(7)
    order = list(range(PAGES))
    rng.shuffle(order)
    for i in order:
        topic, action = TOPICS[i % len(TOPICS)], ACTIONS[i % len(ACTIONS)]
        folder = FOLDERS[i % len(FOLDERS)]
        links = " ".join(f"[[{path_of((i * 7 + k) % PAGES)}]]" for k in range(1, 4))
        entities = ["Kestrel"] if i % 9 == 0 else ["Owl"] if i % 11 == 0 else []
        meta: dict[str, Any] = {"title": f"{topic} {action}", "entities": entities}
        if folder == "sessions":
            meta["kind"] = "session"
        body = (
            f"Shared words everywhere. The {topic} {action} topic {i % 10} page {i}.\n\n"
            f"Related: {links}\n"
        )
        runtime.wiki.write_page(P.page(path_of(i)), body, meta)


def rankings(runtime: Runtime) -> str:
    """Every answer, without the page ids (version row ids are not part of a ranking)."""
    out = []
    for query in QUERIES:
        request = SearchRequest.parse(
            {"query": query, "project": "alpha", "limit": 20, "explain": True}
        )
        result = asyncio.run(search(runtime.retrieval, request)).to_dict()
        for hit in result["hits"]:
            hit.pop("page_id")
        result.pop("timings")
        for stream in result["explain"]["streams"].values():
            stream.pop("ms")
        out.append(json.dumps([query, result["hits"], result["explain"]], sort_keys=True))
    return "\n".join(out)


def test_reindex_changes_no_ranking(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}))
    try:
        write_wiki(runtime)
        before = rankings(runtime)
        assert before.count('"path"') > 200  # the queries do rank many pages
        assert '"graph"' in before and '"entities"' in before
        runtime.reindex()
        assert rankings(runtime) == before
    finally:
        runtime.stop()
