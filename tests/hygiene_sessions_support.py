"""A populated data dir for the hygiene tests: pages, sessions captured through /hook by a
real server, their session pages and handoffs; and the checks every operation must pass."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ServerProcess, run_cli_here
from tests.hooks_support import make_checkout

SHOP = "acme-shop"
API = "acme-api"
# Words that appear only in the session that is purged or moved.
SECRET = "zebracornwidget"
SECRET_REPLY = "quokkafrobnicator"


def post_event(
    client: httpx.Client, event: str, session: str, cwd: Path, key: str, **body: Any
) -> None:
    params = {"agent": "gemini", "event": event, "session_id": session, "cwd": str(cwd)}
    response = client.post(
        "/hook",
        params={**params, "ingest_key": key},
        json={"hook_event_name": event, "session_id": session, "cwd": str(cwd), **body},
    )
    assert response.status_code == 202, response.text


def capture_session(client: httpx.Client, session: str, cwd: Path, prompt: str, reply: str) -> None:
    post_event(client, "BeforeAgent", session, cwd, f"{session}-p", prompt=prompt)
    post_event(client, "AfterAgent", session, cwd, f"{session}-s", prompt_response=reply)
    post_event(client, "SessionEnd", session, cwd, f"{session}-e", reason="exit")


def populate(server: ServerProcess, tmp: Path) -> None:
    """Two projects; in acme-shop a session about the secret words, one about coupons and a
    curated page linking to the first session's page; in acme-api one session."""
    shop = make_checkout(tmp / "shop")
    api = make_checkout(tmp / "api", remote="git@github.com:acme/api.git")
    with server.client() as client:
        capture_session(
            client,
            "s-wrong",
            shop,
            f"Rotate the {SECRET} credentials in the billing service",
            f"Rotated the {SECRET} keys; the {SECRET_REPLY} cache was flushed.",
        )
        capture_session(
            client, "s-keep", shop, "Add a coupon field to checkout", "Added the coupon field."
        )
        capture_session(
            client, "s-api", api, "Document the rate limiter", "Documented the rate limiter."
        )
        flushed = client.post("/api/v1/sessions/flush", params={"timeout": 30})
        assert flushed.is_success, flushed.text
        page = {"body": "# Coupons\n\nSee [[sessions/s-wrong.md]] and [[sessions/s-keep.md]].\n"}
        assert client.put(f"/api/v1/projects/default/{SHOP}/pages/concepts/coupons.md", json=page)
        for session, project in (("s-wrong", SHOP), ("s-keep", SHOP), ("s-api", API)):
            url = f"/api/v1/projects/default/{project}/pages/sessions/{session}.md"
            assert client.get(url).status_code == 200, session
    assert run_cli_here("commit", "--server", server.url, data_dir=server.data_dir).returncode == 0


def cli(server: ServerProcess, *args: str) -> Any:
    """A hygiene command through the CLI against the running server, as JSON (in this
    process: each test also runs the commands as real subprocesses)."""
    done = run_cli_here(*args, "--server", server.url, "--json", data_dir=server.data_dir)
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def search(client: httpx.Client, query: str, project: str) -> list[tuple[str, str]]:
    """(project, path) of page hits, then (project, session) of raw observation hits."""
    answer = client.get("/api/v1/search", params={"q": query, "project": project})
    assert answer.status_code == 200, answer.text
    data = answer.json()
    found = [(h["project"], h["path"]) for h in data["hits"]]
    found += [(r["project"], f"raw:{r['session_id']}") for r in data["raw_hits"]]
    return found


def index_snapshot(data_dir: Path) -> dict[str, Any]:
    """What a reindex could change: the live pages and their derived rows."""
    with sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True) as conn:
        pages = conn.execute(
            "SELECT workspace, project, path, title, kind, content_hash FROM pages "
            "WHERE is_latest = 1 AND deleted_at IS NULL ORDER BY workspace, project, path"
        ).fetchall()
        links = conn.execute(
            "SELECT workspace, project, src_path, dst_workspace, dst_project, dst_path FROM links "
            "ORDER BY 1, 2, 3, 4, 5, 6"
        ).fetchall()
        fts = conn.execute("SELECT count(*) FROM pages_fts_docsize").fetchone()[0]
    return {"pages": pages, "links": links, "fts": fts}


def local_search(data_dir: Path, query: str, project: str) -> list[tuple[str, str]]:
    done = run_cli_here("search", query, "--project", project, "--json", data_dir=data_dir)
    assert done.returncode == 0, done.stderr.decode()
    data = json.loads(done.stdout)
    return [(h["project"], h["path"]) for h in data["hits"]]


def assert_reindex_changes_nothing(data_dir: Path, queries: list[tuple[str, str]]) -> None:
    """With the server stopped: a full reindex finds nothing to add, update or remove, and
    the index and search answers are the same after it."""
    before = index_snapshot(data_dir)
    found = [local_search(data_dir, q, p) for q, p in queries]
    done = run_cli_here("reindex", data_dir=data_dir)
    assert done.returncode == 0, done.stderr.decode()
    assert b" 0 added, 0 updated, 0 removed" in done.stdout, done.stdout.decode()
    assert index_snapshot(data_dir) == before
    assert [local_search(data_dir, q, p) for q, p in queries] == found


def files_containing(root: Path, needle: str, *, skip_git: bool = True) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if not path.is_file() or (skip_git and ".git" in path.relative_to(root).parts):
            continue
        if needle.encode() in path.read_bytes():
            hits.append(str(path.relative_to(root)))
    return hits


def audit_rows(data_dir: Path, action: str) -> list[dict[str, Any]]:
    with sqlite3.connect(f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True) as conn:
        conn.row_factory = sqlite3.Row
        rows = conn.execute(
            "SELECT actor, action, workspace, project, path, detail FROM audit_log "
            "WHERE action = ? ORDER BY id",
            (action,),
        ).fetchall()
    return [{**dict(r), "detail": json.loads(r["detail"])} for r in rows]
