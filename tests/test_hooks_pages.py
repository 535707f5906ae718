"""Session pages: captured text stays inert content; pages a failure left out come back."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from markdown_it import MarkdownIt

from tests.hooks_support import app_client
from tests.test_hooks_ingest import read_page, session_events

HOSTILE = (
    "```\nunclosed code block swallowing the page\n"
    "# Not a heading\n---\ntitle: fake\n---\n"
    "see [[decisions/secret]] and [this](other.md) and ````` five ticks"
)


def test_captured_text_opens_no_block_and_makes_no_link(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        client.post("/hook/batch", json=session_events("hostile", ["[[x]] " + HOSTILE, HOSTILE]))
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = read_page(client, "sessions/hostile.md")
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        links = conn.execute(
            "SELECT dst_path FROM links WHERE src_path = 'sessions/hostile.md'"
        ).fetchall()
    finally:
        conn.close()
    assert links == []
    tokens = MarkdownIt("commonmark").parse(page["body"])
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Goal" in headings and "What changed" in headings and "Tool calls" in headings
    assert "Not a heading" not in headings
    code = "".join(t.content for t in tokens if t.type == "fence")
    assert "unclosed code block swallowing the page" in code


def test_an_ended_session_missing_its_page_is_retried_by_the_scheduler(data_dir: Path) -> None:
    with app_client(data_dir, hooks__scheduler_interval_s="0.2") as client:
        client.post("/hook/batch", json=session_events("lost", ["write the page again"]))
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        conn = sqlite3.connect(data_dir / "db" / "memory.sqlite", timeout=30)
        try:
            with conn:  # as if every try at writing its page had failed
                conn.execute("UPDATE sessions SET page_id = NULL WHERE session_id = 'lost'")
            deadline = time.monotonic() + 30
            page_id = None
            while page_id is None and time.monotonic() < deadline:
                time.sleep(0.1)
                page_id = conn.execute(
                    "SELECT page_id FROM sessions WHERE session_id = 'lost'"
                ).fetchone()[0]
        finally:
            conn.close()
    assert page_id is not None
