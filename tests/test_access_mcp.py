"""Project access for every MCP tool: a real server, a real MCP client per user key.

Users ``none`` (no grant), ``reader`` (read grant), ``writer`` (write grant) and
``admin``, against an ``open`` project and a ``restricted`` one. Every cell of the
table below is asserted: ``ok`` (the call did its work), ``forbidden`` (an error
naming the user and the project, and nothing of its contents), or the domain error
a permitted call meets (e.g. ``llm_unavailable`` with no provider configured). The
tool list comes from the server: a tool the table does not cover fails the test.
Then the multi-project reads: a project the caller may not read is absent.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from mcp import Client

from tests.conftest import ServerProcess
from tests.mcp_support import connect, db_path, module_server
from tests.team_support import grant, make_project, make_user, restrict

WS = "default"
OPEN, LOCKED = "mx-open", "mx-locked"
USERS = ("none", "reader", "writer", "admin")
MARKER = "quokka"
# Tools another file's matrix covers (cross-project messages and importers' batch writes).
DELEGATED = {
    "memory_message_send": "tests/test_messages.py",
    "memory_message_list": "tests/test_messages.py",
    "memory_message_pop": "tests/test_messages.py",
    "memory_message_cancel": "tests/test_messages.py",
    "memory_resolve_write_target": "tests/test_write_batch.py",
    "memory_write_pages_batch": "tests/test_write_batch.py",
}

# Outcomes per user (none, reader, writer, admin), on the open and the restricted project.
READS = {OPEN: ("ok", "ok", "ok", "ok"), LOCKED: ("forbidden", "ok", "ok", "ok")}
WRITES = {OPEN: ("ok", "ok", "ok", "ok"), LOCKED: ("forbidden", "forbidden", "ok", "ok")}
ANYWHERE = {OPEN: ("ok", "ok", "ok", "ok"), LOCKED: ("ok", "ok", "ok", "ok")}
NO_LLM = "llm_unavailable"
LLM_READS = {OPEN: (NO_LLM,) * 4, LOCKED: ("forbidden", NO_LLM, NO_LLM, NO_LLM)}
# Without session_id: the caller's own newest other session; only root's exist (admins see it).
OWN_SESSIONS = {
    OPEN: ("not_found", "not_found", "not_found", "ok"),
    LOCKED: ("forbidden", "not_found", "not_found", "ok"),
}


@dataclass(frozen=True)
class Seeded:
    """What the module's server holds before the matrix runs."""

    keys: dict[str, str]
    page_ids: dict[tuple[str, str], int]  # (project, path) -> page_id
    handoffs: dict[tuple[str, str], int]  # (project, user) -> a shared handoff to cancel


Args = Callable[[str, str, Seeded], dict[str, Any]]
# (label, tool, arguments for (user, project), expected outcomes)
MATRIX: list[tuple[str, str, Args, dict[str, tuple[str, ...]]]] = [
    ("query", "memory_query", lambda u, p, s: {"query": MARKER}, READS),
    ("read_page", "memory_read_page", lambda u, p, s: {"path": "notes/a.md"}, READS),
    ("read_page(query)", "memory_read_page", lambda u, p, s: {"query": MARKER}, READS),
    ("recent", "memory_recent", lambda u, p, s: {}, READS),
    ("status", "memory_status", lambda u, p, s: {}, READS),
    ("briefing", "memory_briefing", lambda u, p, s: {}, READS),
    ("explore", "memory_explore", lambda u, p, s: {}, READS),
    ("self_routing", "memory_install_self_routing", lambda u, p, s: {}, ANYWHERE),
    ("handoff_list", "memory_handoff_list", lambda u, p, s: {}, READS),
    ("observations", "memory_read_session_observations", lambda u, p, s: {}, OWN_SESSIONS),
    ("sweep(dry)", "memory_forget_sweep", lambda u, p, s: {"dry_run": True}, READS),
    ("consolidate(dry)", "memory_consolidate", lambda u, p, s: {"dry_run": True}, LLM_READS),
    ("auto_improve(dry)", "memory_auto_improve", lambda u, p, s: {"dry_run": True}, LLM_READS),
    (
        "write_page",
        "memory_write_page",
        lambda u, p, s: {"path": f"w/{u}.md", "body": f"{u} wrote this"},
        WRITES,
    ),
    (
        "patch_page",
        "memory_patch_page",
        lambda u, p, s: {
            "path": f"patch/{u}.md",
            "expected_page_id": s.page_ids[(p, f"patch/{u}.md")],
            "op": "append",
            "content": "more",
        },
        WRITES,
    ),
    ("delete_page", "memory_delete_page", lambda u, p, s: {"path": f"del/{u}.md"}, WRITES),
    ("restore_page", "memory_restore_page", lambda u, p, s: {"path": f"gone/{u}.md"}, WRITES),
    (
        "feedback",
        "memory_feedback",
        lambda u, p, s: {"path": "notes/a.md", "signal": "helpful"},
        WRITES,
    ),
    ("lint", "memory_lint", lambda u, p, s: {}, WRITES),
    ("sweep", "memory_forget_sweep", lambda u, p, s: {"dry_run": False}, WRITES),
    ("handoff_begin", "memory_handoff_begin", lambda u, p, s: {"summary": f"from {u}"}, WRITES),
    ("handoff_accept", "memory_handoff_accept", lambda u, p, s: {}, WRITES),
    (
        "handoff_cancel",
        "memory_handoff_cancel",
        lambda u, p, s: {"handoff_id": s.handoffs[(p, u)]},
        WRITES,
    ),
]


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def seeded(srv: ServerProcess) -> Seeded:
    """Both projects through the root token: pages, links both ways, a session, handoffs."""
    keys = {user: make_user(srv, f"mx-{user}", admin=user == "admin") for user in USERS}
    page_ids: dict[tuple[str, str], int] = {}
    handoffs: dict[tuple[str, str], int] = {}
    other = {OPEN: LOCKED, LOCKED: OPEN}
    with srv.client() as root:
        for project in (OPEN, LOCKED):
            make_project(srv, WS, project)
            pages = {
                "notes/a.md": f"# A\n\nThe {MARKER} of {project}.",
                "notes/link.md": f"# Link\n\n[[{other[project]}:notes/a.md]] {MARKER} again.",
            }
            for user in USERS:
                pages[f"patch/{user}.md"] = "# Patch\n\nbody"
                pages[f"del/{user}.md"] = "# Delete\n\nbody"
                pages[f"gone/{user}.md"] = "# Gone\n\nbody"
            for path, body in pages.items():
                url = f"/api/v1/projects/{WS}/{project}/pages/{path}"
                answer = root.put(url, json={"body": body})
                assert answer.status_code in (200, 201), answer.text
                page_ids[(project, path)] = answer.json()["page_id"]
            for user in USERS:
                gone = root.delete(f"/api/v1/projects/{WS}/{project}/pages/gone/{user}.md")
                assert gone.status_code == 200, gone.text
                opened = root.post(
                    "/api/v1/handoffs",
                    json={"workspace": WS, "project": project, "summary": "x", "shared": True},
                )
                handoffs[(project, user)] = opened.json()["id"]
            hook = {"workspace": WS, "project": project, "agent": "claude-code"}
            hook["session_id"] = f"{project}-root"
            prompt = {"prompt": f"root asks about the {MARKER}"}
            root.post("/hook", params={**hook, "event": "UserPromptSubmit"}, json=prompt)
            root.post("/hook", params={**hook, "event": "SessionEnd"}, json={})
        root.post("/api/v1/sessions/flush", params={"timeout": 60})
    restrict(srv, WS, LOCKED)
    grant(srv, WS, LOCKED, "mx-reader", "read")
    grant(srv, WS, LOCKED, "mx-writer", "write")
    return Seeded(keys, page_ids, handoffs)


def outcome(result: Any) -> tuple[str, str]:
    """``ok`` or the error code, with the text an agent would see."""
    content = result.structured_content or {}
    text = str(content) + "".join(getattr(c, "text", "") for c in result.content)
    return (content.get("error", "error") if result.is_error else "ok"), text


async def run_user(srv: ServerProcess, user: str, seeded: Seeded) -> dict[tuple[str, str], Any]:
    """Every matrix call of one user, in one MCP session."""
    found: dict[tuple[str, str], Any] = {}
    async with connect(srv, token=seeded.keys[user]) as client:
        for label, tool, args, _ in MATRIX:
            for project in (OPEN, LOCKED):
                arguments = {**args(user, project, seeded), "project": project}
                if tool == "memory_install_self_routing":
                    arguments.pop("project")
                found[(label, project)] = outcome(await client.call_tool(tool, arguments))
    return found


async def listed_tools(srv: ServerProcess) -> set[str]:
    async with connect(srv) as client:
        return {tool.name for tool in (await client.list_tools()).tools}


def test_the_matrix_covers_every_tool_the_server_lists(srv: ServerProcess) -> None:
    covered = {tool for _, tool, _, _ in MATRIX}
    listed = asyncio.run(listed_tools(srv))
    assert listed - set(DELEGATED) == covered
    for tool, where in DELEGATED.items():  # a delegated tool has its own access tests there
        with open(where, encoding="utf-8") as handle:
            source = handle.read()
        assert tool in source and "forbidden" in source, (tool, where)


def test_every_tool_for_every_user_on_open_and_restricted_projects(
    srv: ServerProcess, seeded: Seeded
) -> None:
    results = {user: asyncio.run(run_user(srv, user, seeded)) for user in USERS}
    wrong = []
    for label, _, _, expected in MATRIX:
        for project in (OPEN, LOCKED):
            for user, want in zip(USERS, expected[project], strict=True):
                got, text = results[user][(label, project)]
                if got != want:
                    wrong.append(f"{label} {project} {user}: want {want}, got {got}: {text[:300]}")
                elif got == "forbidden":
                    named = f"mx-{user}" in text and f"{WS}/{project}" in text
                    if not named or MARKER in text:
                        wrong.append(f"{label} {project} {user}: refusal {text[:300]}")
    assert not wrong, "\n".join(wrong)
    refused_writes_left_nothing(srv, seeded)


def refused_writes_left_nothing(srv: ServerProcess, seeded: Seeded) -> None:
    """none and reader tried every write on the restricted project: no file, row or change."""
    with sqlite3.connect(db_path(srv)) as conn:
        for user in ("none", "reader"):
            paths = conn.execute(
                "SELECT path FROM pages WHERE project = ? AND path = ?", (LOCKED, f"w/{user}.md")
            ).fetchall()
            assert paths == []
            deleted = conn.execute(
                "SELECT deleted_at FROM pages WHERE project = ? AND path = ? AND is_latest = 1",
                (LOCKED, f"del/{user}.md"),
            ).fetchall()
            assert deleted == [(None,)]
            status = conn.execute(
                "SELECT status FROM handoffs WHERE id = ?", (seeded.handoffs[(LOCKED, user)],)
            ).fetchall()
            assert status == [("open",)]
            audit = conn.execute(
                "SELECT count(*) FROM audit_log WHERE project = ? AND user_name = ?",
                (LOCKED, f"mx-{user}"),
            ).fetchone()
            assert audit == (0,)
        writer = conn.execute(
            "SELECT count(*) FROM audit_log WHERE project = ? AND user_name = 'mx-writer'",
            (LOCKED,),
        ).fetchone()
        assert writer[0] > 0
    wiki = srv.data_dir / "wiki" / WS / LOCKED
    assert not (wiki / "w" / "none.md").exists() and not (wiki / "w" / "reader.md").exists()
    assert (wiki / "w" / "writer.md").exists()


async def _multi(client: Client) -> dict[str, Any]:
    """The multi-project reads of one caller, as structured answers."""

    async def call(name: str, **args: Any) -> Any:
        result = await client.call_tool(name, args)
        return result.structured_content or {}

    return {
        "global": await call("memory_query", query=MARKER, **{"global": True}),
        "scopes": await call("memory_query", query=MARKER, project=OPEN, scopes=[OPEN, LOCKED]),
        "link": await call(
            "memory_read_page", project=OPEN, path="notes/link.md", include_related=True
        ),
        "backlinks": await call("memory_read_page", project=OPEN, path="notes/a.md"),
        "status": await call("memory_status", project=OPEN),
    }


def multi(srv: ServerProcess, key: str) -> dict[str, Any]:
    async def run() -> dict[str, Any]:
        async with connect(srv, token=key) as client:
            return await _multi(client)

    return asyncio.run(run())


def projects_in(items: list[dict[str, Any]]) -> set[str]:
    return {item["project"] for item in items}


def test_a_project_the_caller_may_not_read_is_absent_from_multi_project_reads(
    srv: ServerProcess, seeded: Seeded
) -> None:
    outside = multi(srv, seeded.keys["none"])
    inside = multi(srv, seeded.keys["reader"])
    admin = multi(srv, seeded.keys["admin"])
    # global=true: the restricted project's pages are absent, not refused
    assert OPEN in projects_in(outside["global"]["hits"])
    assert LOCKED not in projects_in(outside["global"]["hits"])
    assert LOCKED in projects_in(inside["global"]["hits"])
    # scopes naming it: refused, naming the user and the project
    assert outside["scopes"]["error"] == "forbidden"
    assert "mx-none" in outside["scopes"]["message"] and LOCKED in outside["scopes"]["message"]
    assert LOCKED in projects_in(inside["scopes"]["hits"])
    # links, backlinks and related pages never name a page of it
    for key in ("links", "related"):
        assert LOCKED not in projects_in(outside["link"][key]), outside["link"][key]
        assert LOCKED in projects_in(inside["link"][key]), inside["link"][key]
    assert LOCKED not in projects_in(outside["backlinks"]["backlinks"])
    assert LOCKED in projects_in(inside["backlinks"]["backlinks"])
    # status counts leave it out, as if it did not exist
    with sqlite3.connect(db_path(srv)) as conn:
        sql = "SELECT count(*) FROM pages WHERE project = ? AND is_latest = 1"
        locked_pages = conn.execute(sql, (LOCKED,)).fetchone()[0]
    assert outside["status"]["projects"] == admin["status"]["projects"] - 1
    assert outside["status"]["pages"] == admin["status"]["pages"] - locked_pages
    assert inside["status"]["pages"] == admin["status"]["pages"]
    assert MARKER not in str(outside["status"])


COUNTED = "mx-counted"


async def _counted(srv: ServerProcess, key: str) -> dict[str, Any]:
    async with connect(srv, token=key) as client:
        brief = await client.call_tool("memory_briefing", {"project": COUNTED})
        status = await client.call_tool("memory_status", {"project": COUNTED})
        found = await client.call_tool(
            "memory_query", {"query": "wombat", "project": COUNTED, "explain": True}
        )
    return {
        "briefing": brief.structured_content or {},
        "status": status.structured_content or {},
        "query": found.structured_content or {},
    }


def test_counts_and_explain_hold_only_what_the_callers_lists_show(
    srv: ServerProcess, seeded: Seeded
) -> None:
    """The operator's session and private handoff: a user counts neither, and a search
    hit on the session's page names none of its observations, even with explain."""
    make_project(srv, WS, COUNTED)
    with srv.client() as root:
        hook = {"workspace": WS, "project": COUNTED, "agent": "claude-code", "session_id": "ct"}
        prompt = {"prompt": "the wombat migration plan"}
        root.post("/hook", params={**hook, "event": "UserPromptSubmit"}, json=prompt)
        root.post("/hook", params={**hook, "event": "SessionEnd"}, json={})
        root.post("/api/v1/sessions/flush", params={"timeout": 60})
        body = {"workspace": WS, "project": COUNTED, "summary": "the operator's own plan"}
        assert root.post("/api/v1/handoffs", json=body).status_code == 201
    seen = {user: asyncio.run(_counted(srv, seeded.keys[user])) for user in ("none", "admin")}
    with sqlite3.connect(db_path(srv)) as conn:
        every = [
            conn.execute(f"SELECT count(*) FROM {table} WHERE project = ?", (COUNTED,)).fetchone()[
                0
            ]
            for table in ("sessions", "observations")
        ]
        sql = "SELECT count(*) FROM handoffs WHERE project = ? AND status = 'open'"
        every.append(conn.execute(sql, (COUNTED,)).fetchone()[0])
    names = ("sessions", "observations", "open_handoffs")
    for user, want in (("none", [0, 0, 0]), ("admin", every)):
        counts = seen[user]["briefing"]["counts"]
        assert [counts[name] for name in names] == want, user
        assert seen[user]["status"]["project"] == counts
    assert seen["none"]["briefing"]["open_handoffs"] == []
    assert min(every) > 0
    hits = {
        user: next(h for h in seen[user]["query"]["hits"] if h["path"] == "sessions/ct.md")
        for user in seen
    }
    assert hits["admin"]["turns"] and hits["admin"]["explain"]["observation_id"]
    assert hits["admin"]["explain"]["turns"]
    assert not hits["none"].get("turns")
    assert hits["none"]["explain"].get("observation_id") is None
    assert hits["none"]["explain"].get("turns") is None
