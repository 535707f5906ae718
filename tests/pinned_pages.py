"""Pages written before hostile input, and the check that they come through it unchanged."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx

from tests.conftest import ServerProcess

PROJECT = "pinned"
PAGES_URL = f"/api/v1/projects/default/{PROJECT}/pages"
PINNED = {
    "decisions/db.md": {
        "body": "# Database\n\nWe chose SQLite; see [[concepts/wal.md]].",
        "title": "Use SQLite",
        "tags": ["storage", "sqlite"],
        "entities": ["SQLite"],
        "summary": "SQLite in WAL mode",
    },
    "concepts/wal.md": {"body": "WAL lets readers proceed while one writer commits."},
    "notes/unicode-é-日本.md": {"body": "Ünïcödé body 😀 stays as written.", "pinned": True},
}


@dataclass(frozen=True)
class Snapshot:
    """What each pinned page looks like through the API and on disk."""

    api: dict[str, dict[str, Any]]
    disk: dict[str, bytes]


def write_pinned(client: httpx.Client) -> None:
    for path, page in PINNED.items():
        answer = client.put(f"{PAGES_URL}/{path}", json=page)
        assert answer.status_code == 200, answer.text


def snapshot(server: ServerProcess, client: httpx.Client) -> Snapshot:
    api: dict[str, dict[str, Any]] = {}
    disk: dict[str, bytes] = {}
    for path in PINNED:
        answer = client.get(f"{PAGES_URL}/{path}")
        assert answer.status_code == 200, answer.text
        page = answer.json()
        api[path] = {
            key: page[key]
            for key in ("page_id", "version", "title", "tags", "body", "frontmatter", "pinned")
        }
        disk[path] = (server.data_dir / "wiki" / "default" / PROJECT / path).read_bytes()
    return Snapshot(api, disk)
