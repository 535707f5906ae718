"""Consolidation end to end: a captured session becomes linked, versioned pages through Wiki.

A real server on a free port, its real git repository and SQLite file, and the real
openai-compat provider talking to a fake OpenAI-compatible service on loopback.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx
import pygit2

from tests.conftest import ServerProcess
from tests.consolidate_support import (
    PAGES,
    PROJECT,
    capture,
    db_rows,
    durable_answer,
    llm_server,
)
from tests.fake_llm import FakeLlm, answer
from tests.mcp_support import connect, data

SID = "c-1"
PINNED = "# House rules\n\nNever push on Fridays.\n"
DURABLE = (
    "concepts/sqlite-wal.md",
    "decisions/use-wal.md",
    "gotchas/database-is-locked.md",
    "procedures/run-checkout-tests.md",
)
BODY = {**PROJECT, "session_id": SID}


def test_a_session_becomes_linked_pages_once(data_dir: Path) -> None:
    with FakeLlm() as fake:
        server = llm_server(data_dir, fake).start()
        try:
            with server.client() as client:
                seeded = seed(client)
                dry_run_writes_nothing(client, fake)
                run_writes_linked_pages(client, fake, seeded)
                rerun_changes_nothing(client)
                a_later_session_reaffirms(client, fake)
            mcp_dry_run_takes_the_latest_session(server, fake)
        finally:
            server.stop()
        assert len(fake.requests) == 4  # dry run, run, c-2, MCP dry run; no repeat asked
        prompt_leads_with_stable_parts(fake.requests[1].body["messages"])
    evidence_names_every_version(data_dir, seeded)
    git_holds_every_page(data_dir)


def seed(client: httpx.Client) -> dict[str, Any]:
    pinned = client.put(f"{PAGES}/concepts/house-rules.md", json={"body": PINNED, "pinned": True})
    old = client.put(
        f"{PAGES}/decisions/use-wal.md",
        json={"body": "# Use WAL\n\nWe might use WAL; see [[sessions/older.md]].\n"},
    )
    client.put(f"{PAGES}/_prompts/consolidation.md", json={"body": "Write in a terse style."})
    capture(client, SID)
    return {"pinned": pinned.json()["page_id"], "old": old.json()["page_id"]}


def dry_run_writes_nothing(client: httpx.Client, fake: FakeLlm) -> None:
    fake.push(answer(durable_answer(SID)))
    dry = client.post("/api/v1/consolidate", json={**BODY, "dry_run": True})
    assert dry.status_code == 200, dry.text
    planned = {p["path"]: p["action"] for p in dry.json()["pages"]}
    assert planned["decisions/use-wal.md"] == "update"
    assert planned["concepts/sqlite-wal.md"] == "create"
    assert planned["concepts/house-rules.md"] == "skip-pinned"
    assert client.get(f"{PAGES}/concepts/sqlite-wal.md").status_code == 404
    assert client.get(f"{PAGES}/sessions/{SID}.md").json()["version"] == 1
    assert client.get("/api/v1/consolidate/jobs").json()["jobs"] == []


def run_writes_linked_pages(client: httpx.Client, fake: FakeLlm, seeded: dict[str, Any]) -> None:
    fake.push(answer(durable_answer(SID)))
    done = client.post("/api/v1/consolidate", json=BODY)
    assert done.status_code == 200, done.text
    assert done.json()["job"]["state"] == "done"

    session = client.get(f"{PAGES}/sessions/{SID}.md").json()
    assert session["version"] == 2 and session["title"].startswith("Fix 'database")
    assert "WAL mode with a 5 s busy_timeout" in session["body"]
    assert "- Agent: claude-code" in session["body"]  # the captured page stays below
    assert {link["path"] for link in session["links"]} >= set(DURABLE)
    for path in DURABLE:
        page = client.get(f"{PAGES}/{path}").json()
        assert f"[[sessions/{SID}.md]]" in page["body"], path
        assert any(b["path"] == f"sessions/{SID}.md" for b in page["backlinks"])
    concept = client.get(f"{PAGES}/concepts/sqlite-wal.md").json()
    assert concept["kind"] == "concept" and concept["frontmatter"]["tags"] == ["sqlite"]
    assert {link["path"]: link["resolved"] for link in concept["links"]} == {
        "decisions/use-wal.md": True,
        "gotchas/database-is-locked.md": True,
        f"sessions/{SID}.md": True,
    }
    gotcha = client.get(f"{PAGES}/gotchas/database-is-locked.md").json()
    assert "procedures/unknown.md" not in gotcha["body"]  # a link to nothing is dropped

    decision = client.get(f"{PAGES}/decisions/use-wal.md").json()
    assert decision["version"] == 2 and decision["kind"] == "decision"
    assert "[[sessions/older.md]]" in decision["body"]  # earlier sources are kept
    history = client.get("/api/v1/projects/default/shop/history/decisions/use-wal.md").json()
    assert seeded["old"] in [v["page_id"] for v in history["versions"]]
    assert client.get(f"{PAGES}/concepts/house-rules.md").json()["body"] == PINNED

    found = client.get("/api/v1/search", params={**PROJECT, "q": "busy_timeout WAL"})
    assert {"decisions/use-wal.md", "concepts/sqlite-wal.md"} <= {
        hit["path"] for hit in found.json()["hits"]
    }


def rerun_changes_nothing(client: httpx.Client) -> None:
    again = client.post("/api/v1/consolidate", json=BODY).json()
    assert again["already_done"] is True
    assert client.get(f"{PAGES}/decisions/use-wal.md").json()["version"] == 2
    assert client.get(f"{PAGES}/sessions/{SID}.md").json()["version"] == 2
    jobs = client.get("/api/v1/consolidate/jobs").json()
    assert jobs["counts"]["done"] == 1 and len(jobs["jobs"]) == 1


def a_later_session_reaffirms(client: httpx.Client, fake: FakeLlm) -> None:
    capture(client, "c-2")
    (decision,) = [p for p in durable_answer(SID)["pages"] if p["slug"] == "use-wal"]
    fake.push(answer({"title": "Checked the WAL setting", "summary": "Same.", "pages": [decision]}))
    done = client.post("/api/v1/consolidate", json={**PROJECT, "session_id": "c-2"}).json()
    assert [(p["path"], p["action"]) for p in done["pages"]] == [
        ("decisions/use-wal.md", "reaffirm")
    ]
    assert client.get(f"{PAGES}/decisions/use-wal.md").json()["version"] == 2
    later = client.get(f"{PAGES}/sessions/c-2.md").json()
    assert "decisions/use-wal.md" in {link["path"] for link in later["links"]}


def mcp_dry_run_takes_the_latest_session(server: ServerProcess, fake: FakeLlm) -> None:
    fake.push(answer({"title": "Only the session", "summary": "Short.", "pages": []}))

    async def call() -> dict[str, Any]:
        async with connect(server) as client:
            args = {"project": "shop", "dry_run": True, "multi_page": False}
            return data(await client.call_tool("memory_consolidate", args))

    result = asyncio.run(call())
    assert result["session_id"] == "c-2" and result["dry_run"] is True
    assert result["multi_page"] is False and result["pages"] == []
    assert "empty `pages` list" in fake.requests[-1].body["messages"][0]["content"]


def prompt_leads_with_stable_parts(messages: list[dict[str, Any]]) -> None:
    assert [m["role"] for m in messages] == ["system", "user"]
    system, user = messages[0]["content"], messages[1]["content"]
    assert system.startswith("You maintain a project's long-term wiki")
    assert "Keep the language of the source material" in system
    assert "<advisory>\nWrite in a terse style.\n</advisory>" in system
    assert user.index("decisions/use-wal.md") < user.index("database is locked")
    assert '<untrusted-history source="shop">' in user


def evidence_names_every_version(data_dir: Path, seeded: dict[str, Any]) -> None:
    rows = db_rows(data_dir, "SELECT path, page_id, session_id, relation FROM page_evidence")
    first = [r for r in rows if r["session_id"] == SID]
    assert sorted(r["path"] for r in first) == sorted([*DURABLE, f"sessions/{SID}.md"])
    assert {r["relation"] for r in first} == {"produced"}
    latest = {
        r["path"]: r["id"] for r in db_rows(data_dir, "SELECT path, id FROM pages WHERE is_latest")
    }
    assert all(latest[r["path"]] == r["page_id"] for r in rows)
    decision = [
        (r["session_id"], r["relation"]) for r in rows if r["path"] == "decisions/use-wal.md"
    ]
    assert decision == [(SID, "produced"), ("c-2", "reaffirmed")]
    pinned = db_rows(data_dir, "SELECT id FROM pages WHERE path = 'concepts/house-rules.md'")
    assert [r["id"] for r in pinned] == [seeded["pinned"]]


def git_holds_every_page(data_dir: Path) -> None:
    wiki = data_dir / "wiki/default/shop"
    assert "WAL plus busy_timeout" in (wiki / "gotchas/database-is-locked.md").read_text()
    repo = pygit2.Repository(str(data_dir / "wiki"))
    committed = _paths(repo.head.peel(pygit2.Commit).tree)
    assert {f"default/shop/{path}" for path in DURABLE} <= committed


def _paths(tree: pygit2.Tree, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for entry in tree:
        name = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            found |= _paths(entry, f"{name}/")
        else:
            found.add(name)
    return found
