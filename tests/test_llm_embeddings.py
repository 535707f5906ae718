"""Embeddings from an OpenAI-compatible /embeddings endpoint (the fake service) instead of
the local model: prefixes, batches, the dimension check, vectors stored under their identity."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.core.errors import ConfigError, Unavailable
from ai_memory.core.identity import Scope
from ai_memory.llm.remote_embeddings import RemoteEmbedder
from ai_memory.retrieval.backfill import vector_status
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime
from tests.fake_llm import FakeLlm, embedding, fake_llm

__all__ = ["fake_llm"]

P = Scope.of(None, "remote")


def remote_env(fake: FakeLlm, **extra: str) -> dict[str, str]:
    env = {
        "AI_MEMORY_EMBEDDINGS__PROVIDER": "openai-compat",
        "AI_MEMORY_EMBEDDINGS__BASE_URL": fake.openai_url,
        "AI_MEMORY_EMBEDDINGS__MODEL": "nomic-embed-text",
        "AI_MEMORY_EMBEDDINGS__DIM": "8",
    }
    env.update(extra)
    return env


def embedder(fake: FakeLlm, tmp_path: Path, **extra: str) -> RemoteEmbedder:
    env = remote_env(fake, **extra)
    return RemoteEmbedder.from_settings(Config.load(tmp_path, env=env).embeddings, env)


def test_documents_and_queries_get_their_prefixes(fake_llm: FakeLlm, tmp_path: Path) -> None:
    remote = embedder(
        fake_llm,
        tmp_path,
        AI_MEMORY_EMBEDDINGS__QUERY_PREFIX="search_query: ",
        AI_MEMORY_EMBEDDINGS__DOCUMENT_PREFIX="search_document: ",
        AI_MEMORY_EMBEDDINGS__BATCH_SIZE="2",
    )
    matrix = remote.embed(["a", "b", "c"])
    query = remote.embed_query("a")
    assert matrix.shape == (3, 8) and query.shape == (8,)
    assert [list(b["input"]) for b in fake_llm.bodies()] == [
        ["search_document: a", "search_document: b"],
        ["search_document: c"],
        ["search_query: a"],
    ]
    assert fake_llm.bodies()[0]["model"] == "nomic-embed-text"
    assert abs(float((matrix[0] ** 2).sum()) - 1.0) < 1e-5
    assert [round(x, 5) for x in matrix[0]] == [
        round(x, 5) for x in embedding("search_document: a", 8)
    ]


def test_wrong_dimension_is_a_config_error(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.embedding_dim = 16
    with pytest.raises(ConfigError, match="dim is 8"):
        embedder(fake_llm, tmp_path).embed(["a"])


def test_service_failure_is_unavailable(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.embeddings_status = 503
    with pytest.raises(Unavailable, match="HTTP 503"):
        embedder(fake_llm, tmp_path).embed_query("a")


def test_key_is_required_when_named(fake_llm: FakeLlm, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="EMBED_KEY is not set"):
        embedder(fake_llm, tmp_path, AI_MEMORY_EMBEDDINGS__API_KEY_ENV="EMBED_KEY")
    remote = embedder(
        fake_llm, tmp_path, AI_MEMORY_EMBEDDINGS__API_KEY_ENV="EMBED_KEY", EMBED_KEY="ek-1"
    )
    remote.embed_query("a")
    assert fake_llm.requests[0].headers["authorization"] == "Bearer ek-1"


def test_remote_provider_needs_url_and_dim(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="needs base_url and dim"):
        Config.load(tmp_path, env={"AI_MEMORY_EMBEDDINGS__PROVIDER": "openai-compat"})


def test_runtime_stores_remote_vectors_and_searches_without_them_when_down(
    fake_llm: FakeLlm, data_dir: Path
) -> None:
    runtime = Runtime.start(Config.load(data_dir, remote_env(fake_llm)))
    try:
        runtime.wiki.write_page(P.page("notes/tyres.md"), "Patch the inner tube of a flat tyre.")
        index = runtime.retrieval.index
        assert index is not None

        def state() -> dict[str, object]:
            return runtime.readers.read(lambda conn: vector_status(conn, index.embedder))

        deadline = time.monotonic() + 30
        while state()["pages"] == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state() | {"pending": 0, "chunks": 0} == {
            "provider": "openai-compat",
            "model": "nomic-embed-text",
            "dim": 8,
            "pages": 1,
            "chunks": 0,
            "pending": 0,
            "stale": 0,
        }
        request = SearchRequest(query="inner tube", project=P.project, explain=True)
        found = asyncio.run(runtime.retrieval.search(request)).to_dict()
        assert "vectors" in found["explain"]["active_streams"]
        fake_llm.embeddings_status = 503
        down = asyncio.run(runtime.retrieval.search(request)).to_dict()
        assert [h["path"] for h in down["hits"]] == ["notes/tyres.md"]
    finally:
        runtime.stop()
