"""The session-start brief reinforces the pages it shows, throttled like the other reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import httpx

from tests.conftest import ServerProcess

SCOPE = {"workspace": "default", "project": "shop"}
PAGES = "/api/v1/projects/default/shop/pages"


def access_counts(data_dir: Path) -> dict[str, int]:
    conn = sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT path, access_count FROM pages WHERE is_latest = 1")
        return {path: count for path, count in rows}
    finally:
        conn.close()


def settle(client: httpx.Client, n: int) -> None:
    """A write that waits for its commit: the writer runs in order, so every bump queued
    by an earlier answer has committed once it returns."""
    response = client.put(f"{PAGES}/notes/settle-{n}.md", json={"body": "marker"})
    assert response.status_code == 200, response.text


def test_a_page_shown_at_session_start_is_reinforced_once_a_minute(
    server: ServerProcess, data_dir: Path
) -> None:
    with server.client() as client:
        for path, body, pinned in (
            ("_rules/style.md", "Use type hints everywhere.", False),
            ("concepts/huge.md", "lorem ipsum " * 3000, True),
            ("concepts/unpinned.md", "not in the brief", False),
        ):
            extra = {"pinned": True} if pinned else {}
            response = client.put(f"{PAGES}/{path}", json={"body": body, **extra})
            assert response.status_code == 200, response.text
        params = {**SCOPE, "agent": "claude-code", "session_id": "s1", "budget": "600"}
        packet = client.get("/handoff", params=params)
        assert packet.status_code == 200, packet.text
        assert "_rules/style.md" in packet.json()["brief"]["included"]
        assert "concepts/huge.md" in packet.json()["brief"]["omitted"]
        settle(client, 1)
        counts = access_counts(data_dir)
        assert counts["_rules/style.md"] == 1  # shown: reinforced
        assert counts["concepts/huge.md"] == 0  # over budget, not shown
        assert counts["concepts/unpinned.md"] == 0  # not in the brief

        again = client.get("/handoff", params={**params, "session_id": "s2"})
        assert again.status_code == 200, again.text
        settle(client, 2)
        assert access_counts(data_dir)["_rules/style.md"] == 1  # throttled within the minute
