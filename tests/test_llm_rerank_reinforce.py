"""Rerank fetches the fused top ``rerank_top`` hits for the provider, but only the hits
the caller is shown count as read: turning rerank on does not bump the access count of
pages the answer cut away."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from tests.fake_llm import FakeLlm, answer
from tests.hooks_support import app_client
from tests.learning_support import llm_settings

PAGES = "/api/v1/projects/default/reads/pages"


def read_pages(data_dir: Path) -> set[str]:
    """The project's pages a search has counted as read."""
    with sqlite3.connect(data_dir / "db" / "memory.sqlite") as conn:
        rows = conn.execute(
            "SELECT path FROM pages WHERE project = 'reads' AND is_latest = 1 AND access_count > 0"
        )
        return {str(path) for (path,) in rows}


def test_only_the_hits_shown_after_a_rerank_are_reinforced(data_dir: Path) -> None:
    with FakeLlm() as fake:
        settings = llm_settings(fake, answers__rerank="true")
        with app_client(data_dir, **settings) as client:
            for n in range(6):
                body = f"# Note {n}\n\nReaders never wait for the writer queue ({n})."
                assert client.put(f"{PAGES}/notes/n{n}.md", json={"body": body}).is_success
            fake.push(answer({"order": []}))  # the local order stands
            params = {"q": "readers writer queue", "project": "reads", "limit": "2"}
            found = client.get("/api/v1/search", params=params).json()
            shown = {hit["path"] for hit in found["hits"]}
            assert len(shown) == 2 and len(fake.requests) == 1
            deadline = time.monotonic() + 10
            while not read_pages(data_dir) and time.monotonic() < deadline:
                time.sleep(0.05)  # one search's hits reach the writer in one hand-over
    assert read_pages(data_dir) == shown
