"""Bulk writes for importers: preflight a target, then 1-100 pages all or nothing."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
from collections.abc import Iterator
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from tests.conftest import ServerProcess
from tests.mcp_support import connect, data, db_path, failure, module_server
from tests.team_support import as_user, grant, make_project, make_user, restrict

USERS = ("none", "reader", "writer", "admin")


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def keys(srv: ServerProcess) -> dict[str, str]:
    return {name: make_user(srv, name) for name in ("writer", "reader")}


async def _call(srv: ServerProcess, key: str, name: str, args: dict[str, Any]) -> Any:
    async with connect(srv, token=key) as client:
        try:
            return await client.call_tool(name, args)
        except MCPError as exc:
            error = exc
    raise error


def batch(srv: ServerProcess, key: str, project: str, pages: list[dict[str, Any]]) -> Any:
    args = {"project": project, "pages": pages}
    return asyncio.run(_call(srv, key, "memory_write_pages_batch", args))


def target(srv: ServerProcess, key: str, project: str) -> dict[str, Any]:
    return data(asyncio.run(_call(srv, key, "memory_resolve_write_target", {"project": project})))


def rows(srv: ServerProcess, project: str) -> list[tuple[str, int]]:
    with sqlite3.connect(db_path(srv)) as conn:
        return conn.execute(
            "SELECT path, version FROM pages WHERE project = ? ORDER BY path, version", (project,)
        ).fetchall()


def committed(srv: ServerProcess, project: str) -> str:
    """Every path of the project git ever committed."""
    wiki = srv.data_dir / "wiki"
    log = ["git", "-C", str(wiki), "log", "--name-only", "--format=", "--", f"default/{project}"]
    return subprocess.run(log, capture_output=True, text=True, check=True).stdout


def pages_of(*paths: str, **extra: Any) -> list[dict[str, Any]]:
    return [{"path": path, "body": f"# {path}\n\nimported", **extra} for path in paths]


def test_one_failing_entry_writes_nothing(srv: ServerProcess, keys: dict[str, str]) -> None:
    make_project(srv, "default", "wb-all")
    before = rows(srv, "wb-all")
    bad_path = pages_of("a.md", "../escape.md", "c.md")
    refused = failure(batch(srv, keys["writer"], "wb-all", bad_path))
    assert refused["error"] == "batch_refused" and "nothing was written" in refused["message"]
    assert [(f["index"], f["path"]) for f in refused["failures"]] == [(1, "../escape.md")]
    bad_body = pages_of("a.md", "b.md", "c.md")
    bad_body[1]["body"] = "---\ntitle: [unclosed\n---\nbody"
    bad_body[2]["expires_at"] = "tomorrow"
    refused = failure(batch(srv, keys["writer"], "wb-all", bad_body))
    assert [f["index"] for f in refused["failures"]] == [1, 2]
    assert "expires_at" in refused["failures"][1]["message"]
    exists = pages_of("a.md", "index.md", "c.md", create_only=True)
    refused = failure(batch(srv, keys["writer"], "wb-all", exists))
    assert [(f["index"], f["error"]) for f in refused["failures"]] == [(1, "precondition_failed")]
    assert isinstance(refused["failures"][0]["current_page_id"], int)
    for name in ("a.md", "c.md", "b.md"):
        assert not (srv.data_dir / "wiki" / "default" / "wb-all" / name).exists()
    assert rows(srv, "wb-all") == before
    assert "a.md" not in committed(srv, "wb-all") and "c.md" not in committed(srv, "wb-all")


def test_create_only_and_expected_page_id(srv: ServerProcess, keys: dict[str, str]) -> None:
    make_project(srv, "default", "wb-cas")
    first = data(batch(srv, keys["writer"], "wb-cas", pages_of("a.md", "b.md", create_only=True)))
    assert first["written"] == 2 and [p["version"] for p in first["pages"]] == [1, 1]
    again = failure(
        batch(srv, keys["writer"], "wb-cas", pages_of("a.md", "b.md", create_only=True))
    )
    ids = [p["page_id"] for p in first["pages"]]
    assert [(f["index"], f["current_page_id"]) for f in again["failures"]] == [
        (0, ids[0]),
        (1, ids[1]),
    ]
    replace = [
        {"path": "a.md", "body": "v2 of a", "expected_page_id": ids[0]},
        {"path": "b.md", "body": "v2 of b", "expected_page_id": ids[0]},  # b's id is ids[1]
    ]
    stale = failure(batch(srv, keys["writer"], "wb-cas", replace))
    assert [f["index"] for f in stale["failures"]] == [1] and rows(srv, "wb-cas")[-1][1] == 1
    replace[1]["expected_page_id"] = ids[1]
    second = data(batch(srv, keys["writer"], "wb-cas", replace))
    assert [p["version"] for p in second["pages"]] == [2, 2] and second["changed"] == 2
    duplicate = failure(batch(srv, keys["writer"], "wb-cas", pages_of("d.md", "d.md")))
    assert [f["index"] for f in duplicate["failures"]] == [1]


def test_a_hundred_pages_pass_and_a_hundred_and_one_are_refused(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    make_project(srv, "default", "wb-many")
    many = pages_of(*(f"imported/p{n:03}.md" for n in range(101)))
    with pytest.raises(MCPError) as over:
        batch(srv, keys["writer"], "wb-many", many)
    assert over.value.code == -32602 and "pages" in over.value.message
    written = data(batch(srv, keys["writer"], "wb-many", many[:100]))
    assert written["written"] == 100 and len(rows(srv, "wb-many")) == 101  # with index.md
    with pytest.raises(MCPError):
        batch(srv, keys["writer"], "wb-many", [])


def test_preflight_and_read_only_user_refused_before_staging(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    make_project(srv, "default", "wb-locked")
    restrict(srv, "default", "wb-locked")
    grant(srv, "default", "wb-locked", "reader", "read")
    grant(srv, "default", "wb-locked", "writer", "write")
    assert target(srv, keys["writer"], "wb-locked")["may_write"] is True
    seen = target(srv, keys["reader"], "wb-locked")
    assert seen["may_write"] is False and seen["access"] == "read" and "only read" in seen["reason"]
    missing = target(srv, keys["writer"], "wb-nowhere")
    assert missing["exists"] is False and missing["may_write"] is False
    before = rows(srv, "wb-locked")
    refused = failure(batch(srv, keys["reader"], "wb-locked", pages_of("x.md")))
    assert refused["error"] == "forbidden" and "reader" in refused["message"]
    assert rows(srv, "wb-locked") == before
    assert not (srv.data_dir / "wiki" / "default" / "wb-locked" / "x.md").exists()
    nowhere = failure(batch(srv, keys["writer"], "wb-nowhere", pages_of("x.md")))
    assert nowhere["error"] == "not_found" and rows(srv, "wb-nowhere") == []
    assert target(srv, keys["writer"], "wb-nowhere")["exists"] is False  # nothing created


def test_http_batch_route(srv: ServerProcess, keys: dict[str, str]) -> None:
    make_project(srv, "default", "wb-http")
    url = "/api/v1/projects/default/wb-http/pages:batch"
    with as_user(srv, keys["writer"]) as http:
        ok = http.put(url, json={"pages": pages_of("a.md", "b.md")})
        assert ok.status_code == 200 and ok.json()["written"] == 2
        clash = http.put(url, json={"pages": pages_of("c.md", "a.md", create_only=True)})
        assert clash.status_code == 409 and clash.json()["failures"][0]["index"] == 1
        too_many = http.put(url, json={"pages": pages_of(*(f"p{n}.md" for n in range(101)))})
        assert too_many.status_code == 422
    with as_user(srv, keys["reader"]) as http:
        make_project(srv, "default", "wb-http-ro")
        restrict(srv, "default", "wb-http-ro")
        grant(srv, "default", "wb-http-ro", "reader", "read")
        refused = http.put(
            "/api/v1/projects/default/wb-http-ro/pages:batch", json={"pages": pages_of("a.md")}
        )
        assert refused.status_code == 403
    assert [path for path, _ in rows(srv, "wb-http")] == ["a.md", "b.md", "index.md"]


def test_access_matrix_for_users_on_open_and_restricted_projects(srv: ServerProcess) -> None:
    """No grant, a read grant, a write grant and an admin, on an open and a restricted
    project: the preflight answers what a batch would meet, and the batch meets it."""
    users = {name: make_user(srv, f"bx-{name}", admin=name == "admin") for name in USERS}
    make_project(srv, "default", "bx-open")
    make_project(srv, "default", "bx-locked")
    restrict(srv, "default", "bx-locked")
    grant(srv, "default", "bx-locked", "bx-reader", "read")
    grant(srv, "default", "bx-locked", "bx-writer", "write")
    may_write = {"bx-open": (True,) * 4, "bx-locked": ("forbidden", False, True, True)}
    for column, user in enumerate(USERS):
        answers = asyncio.run(preflight_and_batch(srv, users[user], list(may_write), user))
        for project, outcomes in may_write.items():
            expected = outcomes[column]
            answer, written = answers[project]
            if expected == "forbidden":
                assert failure(answer)["error"] == "forbidden", (user, project)
            else:
                assert data(answer)["may_write"] is expected, (user, project)
            if expected is True:
                assert data(written)["written"] == 1, (user, project)
            else:
                refused = failure(written)
                assert refused["error"] == "forbidden" and f"bx-{user}" in refused["message"]


async def preflight_and_batch(
    srv: ServerProcess, key: str, projects: list[str], user: str
) -> dict[str, tuple[Any, Any]]:
    """Each project's preflight and one-page batch, in one MCP session of the user's."""
    answers = {}
    async with connect(srv, token=key) as client:
        for project in projects:
            answer = await client.call_tool("memory_resolve_write_target", {"project": project})
            args = {"project": project, "pages": pages_of(f"{user}.md")}
            answers[project] = answer, await client.call_tool("memory_write_pages_batch", args)
    return answers
