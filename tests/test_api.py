from __future__ import annotations

import itertools
import json
import re
import sqlite3
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pygit2
import pytest

from ai_memory.config import Config
from ai_memory.server import create_app
from tests.conftest import ServerProcess, shared_server


def pages_route(project: str) -> str:
    return f"/api/v1/projects/default/{project}/pages"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the file: each test writes to a project of its own."""
    with shared_server(tmp_path_factory, "api") as proc:
        yield proc


def committed_paths(wiki: Path) -> set[str]:
    repo = pygit2.Repository(str(wiki))
    paths: set[str] = set()

    def walk(tree: pygit2.Tree, prefix: str) -> None:
        for entry in tree:
            if entry.type_str == "tree":
                walk(repo.get(entry.id), f"{prefix}{entry.name}/")
            else:
                paths.add(f"{prefix}{entry.name}")

    walk(repo.head.peel(pygit2.Commit).tree, "")
    return paths


def wait_for(predicate, seconds: float = 15.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return bool(predicate())


def test_page_written_through_the_api_is_everywhere(server: ServerProcess) -> None:
    route = pages_route("everywhere")
    with server.client() as client:
        answer = client.put(
            f"{route}/decisions/db.md",
            json={"body": "# Use SQLite\n\nOne writer thread.\n", "tags": ["db"], "pinned": True},
        )
        assert answer.status_code == 200, answer.text
        page_id = answer.json()["page_id"]
        page = client.get(f"{route}/decisions/db.md").json()
    assert page["page_id"] == page_id and page["is_latest"] and page["pinned"]
    file = server.data_dir / "wiki/default/everywhere/decisions/db.md"
    assert file.read_text().startswith("---\ntitle: Use SQLite\n")
    conn = sqlite3.connect(server.data_dir / "db/memory.sqlite")
    hits = conn.execute("SELECT rowid FROM pages_fts WHERE pages_fts MATCH 'writer'").fetchall()
    conn.close()
    assert hits == [(page_id,)]
    assert wait_for(
        lambda: "default/everywhere/decisions/db.md" in committed_paths(server.data_dir / "wiki")
    )


def test_recent_history_delete_and_status(server: ServerProcess) -> None:
    route = pages_route("recent")
    with server.client() as client:
        for i in range(3):
            client.put(f"{route}/notes/{i}.md", json={"body": f"note {i}"}).raise_for_status()
        client.put(f"{route}/notes/0.md", json={"body": "note zero"}).raise_for_status()
        recent = client.get(route, params={"limit": 2}).json()["pages"]
        assert [p["path"] for p in recent] == ["notes/0.md", "notes/2.md"]
        history = client.get("/api/v1/projects/default/recent/history/notes/0.md").json()
        assert [v["version"] for v in history["versions"]] == [2, 1]
        assert client.delete(f"{route}/notes/1.md").json()["deleted"] is True
        assert client.get(f"{route}/notes/1.md").json()["error"] == "not_found"
        status = client.get("/api/v1/status", params={"project": "recent"}).json()
        assert status["project"]["pages"] == 2 and status["project"]["versions"] == 4
        listed = client.get("/api/v1/projects").json()["projects"]
        projects = [p for p in listed if p["name"] == "recent"]  # the file's other tests write too
        assert projects == [
            {
                "workspace": "default",
                "name": "recent",
                "remote": None,
                "created_at": projects[0]["created_at"],
                "pages": 2,
            }
        ]


@pytest.mark.slow
def test_eight_concurrent_writers_of_500_pages(own_server: ServerProcess) -> None:
    server, route = own_server, pages_route("api")  # its counts are the whole index's

    def writer(n: int) -> list[int]:
        statuses = []
        with server.client(timeout=60) as client:
            for i in range(500):
                answer = client.put(
                    f"{route}/w{n}/p{i}.md", json={"body": f"writer {n} page {i} words"}
                )
                statuses.append(answer.status_code)
                assert "database is locked" not in answer.text
        return statuses

    with ThreadPoolExecutor(8) as pool:
        results = [s for statuses in pool.map(writer, range(8)) for s in statuses]
    assert results == [200] * 4000
    conn = sqlite3.connect(server.data_dir / "db/memory.sqlite")
    pages = conn.execute("SELECT count(*) FROM pages WHERE is_latest = 1").fetchone()[0]
    fts = conn.execute("SELECT count(*) FROM pages_fts").fetchone()[0]
    conn.close()
    assert pages == 4000 and fts == 4000
    files = list((server.data_dir / "wiki/default/api").rglob("*.md"))
    assert len(files) == 4000


def test_bad_input_gets_a_clear_4xx_and_changes_nothing(server: ServerProcess) -> None:
    route = pages_route("bad-input")
    with server.client() as client:
        first = client.put(f"{route}/notes/keep.md", json={"body": "keep me"}).json()
        cases = [
            ("PUT", f"{route}/%2E%2E/x.md", {"json": {"body": "x"}}, 400, "invalid_path"),
            ("PUT", f"{route}//etc/passwd", {"json": {"body": "x"}}, 400, "invalid_path"),
            ("PUT", f"{route}/.git/config", {"json": {"body": "x"}}, 400, "invalid_path"),
            ("PUT", f"{route}/a.txt", {"json": {"body": "x"}}, 400, "invalid_path"),
            (
                "PUT",
                "/api/v1/projects/default/bad%20name/pages/a.md",
                {"json": {"body": "x"}},
                400,
                "invalid_identity",
            ),
            (
                "PUT",
                f"{route}/notes/keep.md",
                {"content": b'{"body": "' + b"x" * (20 * 1024 * 1024) + b'"}'},
                413,
                "too_large",
            ),
            (
                "PUT",
                f"{route}/notes/keep.md",
                {
                    "content": b'{"body": "\xff\xfe bad"}',
                    "headers": {"content-type": "application/json"},
                },
                400,
                "invalid_request",
            ),
            (
                "PUT",
                f"{route}/notes/keep.md",
                {"json": {"body": "---\ntitle: [x\n---\nbody"}},
                400,
                "invalid_frontmatter",
            ),
            (
                "PUT",
                f"{route}/notes/keep.md",
                {"json": {"body": "new", "expected_page_id": first["page_id"] + 99}},
                409,
                "precondition_failed",
            ),
            (
                "PUT",
                f"{route}/notes/keep.md",
                {"json": {"body": "new", "kind": "nonsense"}},
                422,
                "invalid_request",
            ),
            ("PUT", f"{route}/notes/keep.md", {"json": {"bodyy": "new"}}, 422, "invalid_request"),
            (
                "PUT",
                f"{route}/notes/keep.md",
                {"content": b"not json", "headers": {"content-type": "application/json"}},
                422,
                "invalid_request",
            ),
            ("DELETE", f"{route}/notes/missing.md", {}, 404, "not_found"),
        ]
        for method, url, kwargs, status, code in cases:
            answer = client.request(method, url, **kwargs)
            assert answer.status_code == status, (url, answer.text[:300])
            payload = answer.json()
            assert payload["error"] == code and payload["message"], (url, payload)
        stale = client.put(
            f"{route}/notes/keep.md", json={"body": "n", "expected_page_id": first["page_id"] + 99}
        ).json()
        assert stale["current_page_id"] == first["page_id"]
        page = client.get(f"{route}/notes/keep.md").json()
    assert page["body"] == "keep me" and page["version"] == 1
    keep = server.data_dir / "wiki/default/bad-input/notes/keep.md"
    assert keep.read_text().endswith("keep me")
    assert not (server.data_dir / "x.md").exists()


def route_paths(routes: list[Any], prefix: str = "") -> Iterator[str]:
    """Every route path, descending into included routers (FastAPI may keep them nested)."""
    for route in routes:
        nested = getattr(route, "original_router", None)
        if nested is not None:
            yield from route_paths(nested.routes, prefix + route.include_context.prefix)
        elif hasattr(route, "methods"):
            yield prefix + route.path


def test_no_route_but_healthz_answers_without_the_token(server: ServerProcess) -> None:
    secret, route = "zebra-quartz-marker", pages_route("api")
    with server.client() as client:
        client.put(f"{route}/a.md", json={"body": secret, "title": secret}).raise_for_status()
    app = create_app(Config.load(server.data_dir, {}), "unused")
    paths = set(route_paths(app.routes)) | {"/", "/nope", "/mcp", "/web", "/hook"}
    values = {"workspace": "default", "project": "api", "path": "a.md", "rest": "x/y"}
    filled = {re.sub(r"\{(\w+)(:\w+)?\}", lambda m: values.get(m.group(1), "1"), p) for p in paths}
    expected = {"/api/v1/search", "/api/v1/projects/default/api/pages/a.md", "/web/search"}
    assert expected | {"/web/default/api/page/a.md", "/web/x/y"} <= filled
    # The sign-in page and its stylesheet hold no data; POST /web/login checks the token itself.
    open_web = {("GET", "/web/login"), ("POST", "/web/login"), ("GET", "/web/style.css")}
    with (
        httpx.Client(base_url=server.url, timeout=10) as anonymous,
        httpx.Client(
            base_url=server.url, headers={"Authorization": "Bearer nope"}, timeout=10
        ) as impostor,
    ):
        for path, method in itertools.product(sorted(filled), ("GET", "POST", "PUT", "DELETE")):
            plain = anonymous.request(method, path)
            wrong = impostor.request(method, path)
            assert secret not in plain.text + wrong.text, (method, path)
            if path == "/healthz":
                assert plain.status_code == (200 if method == "GET" else 405)
                continue
            if (method, path) in open_web:
                assert plain.status_code in (200, 400), (method, path, plain.status_code)
                assert "set-cookie" not in plain.headers and "set-cookie" not in wrong.headers
                continue
            if method == "GET" and (path == "/web" or path.startswith("/web/")):
                for answer in (plain, wrong):  # a browser is sent to sign in, nothing else
                    assert answer.status_code == 303, (method, path, answer.status_code)
                    assert answer.headers["location"].startswith("/web/login?next=")
                    assert answer.content == b""
                continue
            assert plain.status_code == 401, (method, path, plain.status_code)
            assert wrong.status_code == 401, (method, path, wrong.status_code)
            assert json.loads(plain.text)["error"] == "unauthorized"
