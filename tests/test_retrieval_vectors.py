"""The vector stream with the local model: semantic matches, background embedding, staleness.

These need the ``embeddings`` extra (installed by ``make test``) and skip without it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.llm.embeddings import available
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval.backfill import backfill, vector_status
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import Retriever
from ai_memory.retrieval.setup import build_retriever
from ai_memory.runtime import Runtime

pytestmark = pytest.mark.skipif(not available(), reason="the 'embeddings' extra is not installed")

P = Scope.of(None, "vec")
LOCAL = {"AI_MEMORY_EMBEDDINGS__PROVIDER": "local"}
PAGES = {
    "gotchas/bike.md": "Fixing a flat bike tyre: patch the inner tube, then pump it up.",
    "notes/cooking.md": "Slow-roasted tomatoes with garlic and thyme make a good sauce.",
    "notes/taxes.md": "Quarterly filings are due at the end of each fiscal quarter.",
}


def status(retriever: Retriever, runtime: Runtime) -> dict[str, Any]:
    assert retriever.index is not None
    embedder = retriever.index.embedder
    return runtime.readers.read(lambda conn: vector_status(conn, embedder))


def ask(retriever: Retriever, text: str) -> dict[str, Any]:
    request = SearchRequest(query=text, project=P.project, explain=True)
    result: dict[str, Any] = asyncio.run(retriever.search(request)).to_dict()
    return result


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("vectors") / "data"
    initialise(Config.load(path, {}))
    return path


@pytest.fixture(scope="module")
def served(root: Path) -> Iterator[Runtime]:
    """A runtime with the background embedder, as ``serve`` runs it with vectors on."""
    runtime = Runtime.start(Config.load(root, LOCAL))
    for path, body in PAGES.items():
        runtime.wiki.write_page(P.page(path), body)
    deadline = time.monotonic() + 60
    while status(runtime.retrieval, runtime)["pending"] and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        yield runtime
    finally:
        runtime.stop()


def test_the_background_embedder_catches_up_with_writes(served: Runtime) -> None:
    state = status(served.retrieval, served)
    assert state["pending"] == 0 and state["stale"] == 0
    assert state["pages"] == len(PAGES)
    assert state["model"] == "all-MiniLM-L6-v2" and state["dim"] == 384


def test_vectors_find_a_page_that_shares_no_word_with_the_query(served: Runtime) -> None:
    result = ask(served.retrieval, "how do I repair a punctured bicycle wheel")
    top = result["hits"][0]
    assert top["path"] == "gotchas/bike.md"
    assert list(top["explain"]["streams"]) == ["vectors"]
    assert top["explain"]["chunk"] is not None
    assert "vectors" in result["explain"]["active_streams"]


def test_stale_vectors_are_ignored_after_a_model_change(served: Runtime, root: Path) -> None:
    renamed = Config.load(root, {**LOCAL, "AI_MEMORY_EMBEDDINGS__MODEL": "renamed-model"})
    retriever = build_retriever(renamed, served.readers, served.writer, background=False)
    state = status(retriever, served)
    assert state["stale"] >= len(PAGES) and state["pending"] >= len(PAGES)
    before = ask(retriever, "how do I repair a punctured bicycle wheel")
    assert before["hits"] == []
    assert before["explain"]["streams"]["vectors"]["candidates"] == 0

    report = backfill(served.writer, served.readers, renamed, 32)
    assert report.stale >= len(PAGES) and report.pages >= len(PAGES)
    assert status(retriever, served)["stale"] == 0
    after = ask(retriever, "how do I repair a punctured bicycle wheel")
    assert after["hits"][0]["path"] == "gotchas/bike.md"


def test_a_rewritten_page_loses_its_old_vectors(served: Runtime) -> None:
    ref = P.page("notes/cooking.md")
    served.wiki.write_page(ref, "Braised lentils with cumin and lemon.")
    rows = served.readers.read(
        lambda conn: conn.execute(
            "SELECT count(*) FROM page_vectors v JOIN pages p ON p.id = v.page_id "
            "WHERE p.path = ? AND p.is_latest = 0",
            (ref.path,),
        ).fetchone()[0]
    )
    assert rows == 0


def test_embed_command_backfills_and_refuses_when_vectors_are_off(tmp_path: Path) -> None:
    from tests.conftest import clean_env, run_cli

    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}))
    try:
        body = "The first paragraph has enough words.\n\nThe second one has enough words too."
        runtime.wiki.write_page(P.page("notes/a.md"), body)
    finally:
        runtime.stop()
    off = run_cli("embed", data_dir=root)
    assert off.returncode == 1 and b"embeddings are off" in off.stderr
    on = run_cli("embed", data_dir=root, env=clean_env(AI_MEMORY_EMBEDDINGS__PROVIDER="local"))
    assert on.returncode == 0, on.stderr
    assert b"embedded 1 page(s) into 3 chunk vector(s)" in on.stdout
    again = run_cli("embed", data_dir=root, env=clean_env(AI_MEMORY_EMBEDDINGS__PROVIDER="local"))
    assert b"embedded 0 page(s)" in again.stdout
