"""Scope resolution in its four cases, and two agents sharing memory end to end."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from ai_memory.mcp.scope import SESSION_PROJECT
from tests.conftest import ServerProcess, run_cli
from tests.hooks_support import hook_env, make_checkout, run_hook
from tests.mcp_support import bridge, connect, data, db_path, failure, module_server


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


def call(srv: ServerProcess, name: str, headers: dict[str, str] | None = None, **args: Any) -> Any:
    async def scenario() -> Any:
        async with connect(srv, headers) as client:
            return await client.call_tool(name, args)

    return asyncio.run(scenario())


def projects(srv: ServerProcess) -> set[str]:
    with srv.client() as client:
        return {p["name"] for p in client.get("/api/v1/projects").json()["projects"]}


def claude(session: str, cwd: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": None,
        "cwd": str(cwd),
        "hook_event_name": event,
        **fields,
    }


def capture_session(srv: ServerProcess, checkout: Path, session: str, prompt: str) -> None:
    """Agent A's hooks, run as the real hook command, from start to end."""
    env = hook_env(srv.data_dir, srv.url)
    events = [
        ("SessionStart", claude(session, checkout, "SessionStart", source="startup")),
        ("UserPromptSubmit", claude(session, checkout, "UserPromptSubmit", prompt=prompt)),
        (
            "PostToolUse",
            claude(
                session,
                checkout,
                "PostToolUse",
                tool_name="Edit",
                tool_input={
                    "file_path": f"{checkout}/src/cart.py",
                    "old_string": "a",
                    "new_string": "b",
                },
                tool_response={"success": True},
                tool_use_id="t1",
            ),
        ),
        (
            "Stop",
            claude(
                session,
                checkout,
                "Stop",
                stop_hook_active=False,
                last_assistant_message="Discount field added to the cart model.",
            ),
        ),
        ("SessionEnd", claude(session, checkout, "SessionEnd", reason="prompt_input_exit")),
    ]
    for event, payload in events:
        assert run_hook("claude-code", event, payload, env, checkout)[0] == 0
    drain(srv)
    with srv.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})


def drain(srv: ServerProcess) -> None:
    """Deliver what a hook spooled when its 150 ms network budget ran out on a busy machine."""
    done = run_cli("hook-drain", "--server", srv.url, data_dir=srv.data_dir)
    assert done.returncode == 0, done.stderr


def test_explicit_arguments_win(srv: ServerProcess, tmp_path: Path) -> None:
    marked = tmp_path / "marked"
    marked.mkdir()
    (marked / ".ai-memory.toml").write_text('project = "from-marker"\n')
    headers = {"X-AI-Memory-Cwd": quote(str(marked))}
    status = data(call(srv, "memory_status", headers, workspace="team", project="named"))
    assert status["scope"]["source"] == "explicit"
    assert (status["scope"]["workspace"], status["scope"]["project"]) == ("team", "named")
    written = data(
        call(
            srv,
            "memory_write_page",
            headers,
            workspace="team",
            project="named",
            path="a.md",
            body="explicit",
        )
    )
    assert (written["workspace"], written["project"]) == ("team", "named")
    assert "named" in projects(srv) and "from-marker" not in projects(srv)


def test_launch_directory_then_reads_do_not_create_but_writes_do(
    srv: ServerProcess, tmp_path: Path
) -> None:
    launch = tmp_path / "ünïcode dir" / "sub"
    launch.mkdir(parents=True)
    (launch.parent / ".ai-memory.toml").write_text('project = "launched"\n')
    headers = {"X-AI-Memory-Cwd": quote(str(launch))}
    status = data(call(srv, "memory_status", headers))
    assert status["scope"]["source"] == "launch_dir"
    assert status["scope"]["project"] == "launched" and status["scope"]["exists"] is False
    assert str(launch) in status["scope"]["reason"]
    data(call(srv, "memory_recent", headers))
    data(call(srv, "memory_briefing", headers))
    assert "launched" not in projects(srv)
    written = data(call(srv, "memory_write_page", headers, path="notes/x.md", body="hello"))
    assert written["project"] == "launched" and written["scope"]["source"] == "launch_dir"
    assert "launched" in projects(srv)


def test_default_project_for_reads_and_unanchored_writes_are_refused(srv: ServerProcess) -> None:
    for headers in (None, {"X-AI-Memory-Session": "never-seen"}):
        status = data(call(srv, "memory_status", headers))
        assert status["scope"]["source"] == "default"
        assert status["scope"]["project"] == "default"
        refused = failure(call(srv, "memory_write_page", headers, path="a.md", body="lost"))
        assert refused["error"] == "scope_unresolved"
        assert failure(call(srv, "memory_delete_page", headers, path="a.md"))["error"] == (
            "scope_unresolved"
        )
    assert "default" not in projects(srv)


def test_agents_share_memory_end_to_end(srv: ServerProcess, tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "shop")
    (checkout / "src").mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    capture_session(srv, checkout, "a-1", "Add a discount field to the cart")

    # Agent B starts in the same checkout: its SessionStart hook delivers A's handoff.
    start = claude("b-1", checkout, "SessionStart", source="startup")
    env = hook_env(srv.data_dir, srv.url)
    code, out = run_hook("codex", "SessionStart", start, env, checkout / "src")
    assert code == 0
    drain(srv)
    context = out.get("hookSpecificOutput", {}).get("additionalContext")

    # B, through the stdio bridge launched in a subdirectory, finds A's session page.
    async def agent_b() -> tuple[Any, Any, Any]:
        async with bridge(srv, checkout / "src", AI_MEMORY_SESSION_ID="b-1") as client:
            found = await client.call_tool("memory_query", {"query": "discount field cart"})
            accepted = await client.call_tool("memory_handoff_accept", {})
            wrote = await client.call_tool(
                "memory_write_page",
                {
                    "path": "decisions/discount-storage.md",
                    "body": "# Discounts are stored per line item\n\nDecision: store each discount "
                    "on its cart line item, not on the cart.",
                    "kind": "decision",
                    "entities": ["line item", "discounts"],
                },
            )
            seen = await client.call_tool("memory_read_session_observations", {"limit": 2})
            return found, accepted, wrote, seen

    found, accepted, wrote, seen = asyncio.run(agent_b())
    observations = data(seen)
    assert observations["session"]["session_id"] == "a-1"  # the newest *other* session
    assert len(observations["observations"]) == 2 and observations["next_before_id"]
    assert observations["total"] >= 4
    hits = data(found)
    assert hits["scope"]["source"] == "session" and hits["scope"]["project"] == "acme-shop"
    assert "sessions/a-1.md" in [h["path"] for h in hits["hits"]]
    handoff = data(accepted)
    if context is not None:
        assert "Add a discount field to the cart" in context
        assert handoff["result"] == "consumed_by_hook"
    else:  # the hook gave up waiting (busy machine): the handoff is still B's to take
        assert handoff["result"] in ("claimed", "consumed_by_hook")
    assert "Add a discount field to the cart" in json.dumps(handoff["handoff"])
    assert data(wrote)["project"] == "acme-shop" and data(wrote)["created"]

    # An agent whose session id is not in its environment is recognised by its open session.
    async def agent_b_without_env() -> Any:
        async with bridge(srv, checkout / "src") as client:
            return await client.call_tool("memory_read_session_observations", {"limit": 1})

    inferred = data(asyncio.run(agent_b_without_env()))
    assert inferred["scope"]["source"] == "launch_dir"
    assert inferred["session"]["session_id"] == "a-1"

    # A's next query (its session id forwarded, launched elsewhere) finds B's decision first.
    headers = {"X-AI-Memory-Session": "a-1", "X-AI-Memory-Cwd": quote(str(elsewhere))}
    again = data(
        call(srv, "memory_query", headers, query="how are discounts stored on a line item")
    )
    assert again["scope"]["source"] == "session"
    assert again["hits"][0]["path"] == "decisions/discount-storage.md"


def open_session(srv: ServerProcess, workspace: str, project: str, session: str) -> None:
    scope = {"workspace": workspace, "project": project, "agent": "claude-code"}
    with srv.client() as client:
        stored = client.post(
            "/hook",
            params={**scope, "event": "UserPromptSubmit", "session_id": session},
            json={"prompt": "carry on"},
        )
    assert stored.status_code == 202, stored.text


def scope_of(srv: ServerProcess, headers: dict[str, str], **args: Any) -> tuple[str, str, str]:
    scope = data(call(srv, "memory_status", headers, **args))["scope"]
    return scope["source"], scope["workspace"], scope["project"]


def test_an_explicit_workspace_is_never_dropped_for_the_session(
    srv: ServerProcess, tmp_path: Path
) -> None:
    open_session(srv, "default", "sess-home", "ws-1")
    open_session(srv, "team", "sess-team", "ws-2")
    marked = tmp_path / "marked"
    marked.mkdir()
    (marked / ".ai-memory.toml").write_text('project = "marked"\n')
    first = {"X-AI-Memory-Session": "ws-1"}
    assert scope_of(srv, first) == ("session", "default", "sess-home")
    # The session is in another workspace: the workspace argument still holds.
    assert scope_of(srv, first, workspace="team") == ("default", "team", "default")
    with_dir = {**first, "X-AI-Memory-Cwd": quote(str(marked))}
    assert scope_of(srv, with_dir, workspace="team") == ("launch_dir", "team", "marked")
    second = {"X-AI-Memory-Session": "ws-2"}
    assert scope_of(srv, second, workspace="team") == ("session", "team", "sess-team")
    written = data(
        call(srv, "memory_write_page", with_dir, workspace="team", path="w.md", body="here")
    )
    assert (written["workspace"], written["project"]) == ("team", "marked")


def test_the_session_lookup_of_every_call_uses_an_index(srv: ServerProcess) -> None:
    with sqlite3.connect(db_path(srv)) as conn:
        plan = conn.execute(
            "EXPLAIN QUERY PLAN " + SESSION_PROJECT, ("ws-1", None, None)
        ).fetchall()
    details = " ".join(str(row[-1]) for row in plan)
    assert "sessions_by_id" in details and "SCAN sessions" not in details, details
