"""Feedback ranks only when configured, shows in explain, and a rewrite leaves it behind."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.identity import Scope
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime
from ai_memory.store.feedback import add_feedback

API = Scope.of(None, "api")


def parts(runtime: Runtime, query: str) -> dict[str, float]:
    request = SearchRequest.parse(
        {"query": query, "workspace": "default", "project": "api", "explain": True}
    )
    hit = runtime.retrieval.search_sync(request).hits[0]
    assert hit.explain is not None
    return hit.explain.authority_parts


def mark(runtime: Runtime, path: str, signal: str) -> None:
    ref = API.page(path)
    page_id = runtime.wiki.read_page(ref)["page_id"]
    now = iso(datetime.now(UTC))
    runtime.writer.call(lambda conn: add_feedback(conn, ref, page_id, signal, None, now))


def test_feedback_does_not_rank_by_default(runtime: Runtime) -> None:
    runtime.wiki.write_page(API.page("notes/n.md"), "# N\n\nthe narwhal pipeline\n")
    mark(runtime, "notes/n.md", "wrong")
    assert "feedback" not in parts(runtime, "narwhal")


def test_a_weighted_feedback_shows_in_explain_until_a_rewrite(data_dir: Path) -> None:
    config = Config.load(data_dir, {"AI_MEMORY_RETRIEVAL__FEEDBACK_WEIGHT": "1"})
    runtime = Runtime.start(config)
    try:
        ref = API.page("notes/n.md")
        runtime.wiki.write_page(ref, "# N\n\nthe narwhal pipeline\n")
        mark(runtime, "notes/n.md", "wrong")
        assert parts(runtime, "narwhal")["feedback"] < 1.0
        runtime.wiki.write_page(ref, "# N\n\nthe narwhal pipeline, corrected\n")
        assert "feedback" not in parts(runtime, "narwhal")
        mark(runtime, "notes/n.md", "helpful")
        assert parts(runtime, "narwhal")["feedback"] > 1.0
    finally:
        runtime.stop()
