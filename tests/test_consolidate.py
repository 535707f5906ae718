"""Consolidation end to end: a captured session becomes linked, versioned pages through Wiki.

A real server on a free port, its real git repository and SQLite file, and the real
openai-compat provider talking to a fake OpenAI-compatible service on loopback.
"""

from __future__ import annotations

from pathlib import Path

import pygit2

from tests.consolidate_support import (
    PAGES,
    PROJECT,
    capture,
    db_rows,
    durable_answer,
    llm_server,
)
from tests.fake_llm import FakeLlm, answer

SID = "c-1"
PINNED = "# House rules\n\nNever push on Fridays.\n"
DURABLE = (
    "concepts/sqlite-wal.md",
    "decisions/use-wal.md",
    "gotchas/database-is-locked.md",
    "procedures/run-checkout-tests.md",
)


def test_a_session_becomes_linked_pages_once(data_dir: Path) -> None:
    with FakeLlm() as fake:
        run_and_check(data_dir, fake)


def run_and_check(data_dir: Path, fake_llm: FakeLlm) -> None:
    server = llm_server(data_dir, fake_llm).start()
    try:
        with server.client() as client:
            pinned = client.put(
                f"{PAGES}/concepts/house-rules.md", json={"body": PINNED, "pinned": True}
            ).json()
            old = client.put(
                f"{PAGES}/decisions/use-wal.md",
                json={"body": "# Use WAL\n\nWe might use WAL; see [[sessions/older.md]].\n"},
            ).json()
            client.put(
                f"{PAGES}/_prompts/consolidation.md",
                json={"body": "Write the pages in a terse style."},
            )
            capture(client, SID)
            body = {**PROJECT, "session_id": SID}

            fake_llm.push(answer(durable_answer(SID)))
            dry = client.post("/api/v1/consolidate", json={**body, "dry_run": True})
            assert dry.status_code == 200, dry.text
            planned = {p["path"]: p["action"] for p in dry.json()["pages"]}
            assert planned["decisions/use-wal.md"] == "update"
            assert planned["concepts/sqlite-wal.md"] == "create"
            assert planned["concepts/house-rules.md"] == "skip-pinned"
            assert client.get(f"{PAGES}/concepts/sqlite-wal.md").status_code == 404
            assert client.get("/api/v1/consolidate/jobs").json()["jobs"] == []

            fake_llm.push(answer(durable_answer(SID)))
            done = client.post("/api/v1/consolidate", json=body)
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
            history = client.get("/api/v1/projects/default/shop/history/decisions/use-wal.md")
            assert old["page_id"] in [v["page_id"] for v in history.json()["versions"]]
            assert client.get(f"{PAGES}/concepts/house-rules.md").json()["body"] == PINNED

            hits = client.get("/api/v1/search", params={**PROJECT, "q": "busy_timeout WAL"}).json()[
                "hits"
            ]
            assert {"decisions/use-wal.md", "concepts/sqlite-wal.md"} <= {h["path"] for h in hits}

            again = client.post("/api/v1/consolidate", json=body).json()
            assert again["already_done"] is True
            assert client.get(f"{PAGES}/decisions/use-wal.md").json()["version"] == 2
            jobs = client.get("/api/v1/consolidate/jobs").json()
            assert jobs["counts"]["done"] == 1 and len(jobs["jobs"]) == 1
    finally:
        server.stop()

    assert len(fake_llm.requests) == 2  # the dry run and the run; the repeat asked nothing
    prompt = fake_llm.requests[-1].body["messages"]
    assert [m["role"] for m in prompt] == ["system", "user"]
    assert "terse style" in prompt[0]["content"] and "<advisory>" in prompt[0]["content"]
    user = prompt[1]["content"]
    assert user.index("decisions/use-wal.md") < user.index("database is locked")
    assert '<untrusted-history source="shop">' in user

    rows = db_rows(data_dir, "SELECT path, page_id, session_id, relation FROM page_evidence")
    assert {r["path"] for r in rows} == {*DURABLE, f"sessions/{SID}.md"}
    assert {r["relation"] for r in rows} == {"produced"}
    assert all(r["session_id"] == SID for r in rows)
    latest = {
        r["path"]: r["id"]
        for r in db_rows(data_dir, "SELECT path, id FROM pages WHERE is_latest = 1")
    }
    assert all(latest[r["path"]] == r["page_id"] for r in rows)
    pinned_rows = db_rows(data_dir, "SELECT id FROM pages WHERE path = 'concepts/house-rules.md'")
    assert [r["id"] for r in pinned_rows] == [pinned["page_id"]]

    wiki = data_dir / "wiki/default/shop"
    assert (wiki / "gotchas/database-is-locked.md").read_text().count("WAL plus busy_timeout")
    repo = pygit2.Repository(str(data_dir / "wiki"))
    committed = repo.head.peel(pygit2.Commit).tree
    for path in DURABLE:
        assert f"default/shop/{path}" in _paths(committed), path


def _paths(tree: pygit2.Tree, prefix: str = "") -> set[str]:
    found: set[str] = set()
    for entry in tree:
        name = f"{prefix}{entry.name}"
        if isinstance(entry, pygit2.Tree):
            found |= _paths(entry, f"{name}/")
        else:
            found.add(name)
    return found
