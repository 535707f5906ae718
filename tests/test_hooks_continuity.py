"""The continuity defects met with the real agents, each reproduced as it happened."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from ai_memory.core.fence import NOTE
from tests.conftest import ServerProcess, clean_env, shared_server
from tests.hooks_support import app_client, hook_env, make_checkout, run_hook

PROJECT = {"workspace": "default", "project": "acme-shop"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the file: each test captures into a project or session of its own."""
    with shared_server(tmp_path_factory, "continuity") as proc:
        yield proc


def post(client: TestClient, event: str, session: str, cwd: Path, key: str, **body: Any) -> None:
    params = {"agent": body.pop("agent", "claude-code"), "event": event, "session_id": session}
    response = client.post(
        "/hook",
        params={**params, "cwd": str(cwd), "ingest_key": key},
        json={"hook_event_name": event, "session_id": session, "cwd": str(cwd), **body},
    )
    assert response.status_code == 202, response.text


def observations(client: TestClient, session: str) -> list[dict[str, Any]]:
    answer = client.get(f"/api/v1/sessions/{session}/observations", params=PROJECT)
    assert answer.status_code == 200, answer.text
    rows: list[dict[str, Any]] = answer.json()["observations"]
    return rows


def packet(project: str = "default/shop") -> str:
    return (
        f'{NOTE}\n<untrusted-history project="{project}">\n## Handoff from claude-code\n'
        "Fix the cart total\n</untrusted-history>"
    )


@pytest.mark.parametrize(
    "prompt",
    [
        f"<hook_context>{packet()}</hook_context>\n\nAdd a coupon field to the checkout",
        f"{packet()}\n\nAdd a coupon field to the checkout",
        packet().upper().replace("UNTRUSTED-HISTORY", "Untrusted_History")
        + "\nAdd a coupon field to the checkout",
        "<hook_context>\n" + NOTE.replace(" ", "  ") + '\n<untrusted history project="x">\n'
        "stale brief\n</untrusted history>\n</hook_context>\nAdd a coupon field to the checkout",
        # Gemini CLI -p hands the context back HTML-escaped inside its wrapper.
        "<hook_context>"
        + packet().replace("<", "&lt;").replace(">", "&gt;")
        + "</hook_context>\n\nAdd a coupon field to the checkout",
    ],
    ids=["gemini-wrapper", "bare", "other-case", "other-spacing", "html-escaped"],
)
def test_our_injected_packet_is_never_stored_as_the_prompt(
    data_dir: Path, tmp_path: Path, prompt: str
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    with app_client(data_dir) as client:
        post(client, "BeforeAgent", "g-1", checkout, "p", agent="gemini", prompt=prompt)
        post(client, "AfterAgent", "g-1", checkout, "s", agent="gemini", prompt_response="Done.")
        post(client, "SessionEnd", "g-1", checkout, "e", agent="gemini", reason="exit")
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        stored = [o["body"] for o in observations(client, "g-1") if o["kind"] == "user-prompt"]
        page = client.get("/api/v1/projects/default/acme-shop/pages/sessions/g-1.md").json()
        handoff = client.get("/api/v1/handoffs", params=PROJECT).json()["handoffs"][0]
    assert stored == ["Add a coupon field to the checkout"]
    assert page["title"] == "Add a coupon field to the checkout"
    assert handoff["summary"].startswith("Add a coupon field")
    assert "Recorded history" not in page["body"] and "untrusted" not in page["body"].lower()


def test_a_failed_tool_call_keeps_its_error_and_is_marked_failed(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    error = "Exit code 2\nmake: *** No rule to make target 'lint'.  Stop."
    with app_client(data_dir) as client:
        post(client, "UserPromptSubmit", "f-1", checkout, "p", prompt="run the linter")
        post(
            client,
            "PostToolUseFailure",
            "f-1",
            checkout,
            "t",
            tool_name="Bash",
            tool_input={"command": "make lint"},
            tool_use_id="toolu_1",
            error=error,
            is_interrupt=False,
        )
        (failure,) = [o for o in observations(client, "f-1") if o["kind"] == "post-tool-use"]
    assert "No rule to make target 'lint'" in failure["body"]
    assert failure["body"].startswith("Bash: make lint")
    assert failure["meta"]["failed"] is True and failure["meta"]["exit_code"] == 2
    assert failure["meta"]["event"] == "PostToolUseFailure"


def test_a_secret_in_an_object_tool_response_takes_only_itself(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    stdout = (
        "STRIPE_SECRET_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n"
        "STRIPE_WEBHOOK_URL=https://shop.example.com/stripe\nDONE=1"
    )
    response = {"stdout": stdout, "stderr": "", "interrupted": False, "isImage": False}
    with app_client(data_dir) as client:
        post(client, "UserPromptSubmit", "r-1", checkout, "p", prompt="show the env")
        post(
            client,
            "PostToolUse",
            "r-1",
            checkout,
            "t",
            tool_name="Bash",
            tool_input={"command": "cat .env"},
            tool_response=response,
        )
        (tool,) = [o for o in observations(client, "r-1") if o["kind"] == "post-tool-use"]
    assert "sk_live_4eC39HqLyjWDarjtT1zdp7dc" not in tool["body"]
    assert "STRIPE_SECRET_KEY=[REDACTED]" in tool["body"]
    assert "STRIPE_WEBHOOK_URL=https://shop.example.com/stripe\nDONE=1" in tool["body"]


def test_lifecycle_only_sessions_leave_no_session_page_handoff_or_project(
    data_dir: Path, tmp_path: Path
) -> None:
    """`claude mcp list` fires SessionStart and SessionEnd of its own, wherever it runs."""
    stranger = make_checkout(tmp_path / "elsewhere", "git@github.com:acme/elsewhere.git")
    checkout = make_checkout(tmp_path / "shop")
    with app_client(data_dir) as client:
        post(client, "UserPromptSubmit", "work-1", checkout, "w", prompt="real work")
        for folder, session in ((stranger, "list-1"), (checkout, "list-2")):
            post(client, "SessionStart", session, folder, f"{session}s", source="startup")
            post(client, "SessionEnd", session, folder, f"{session}e", reason="other")
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        projects = {p["name"] for p in client.get("/api/v1/projects").json()["projects"]}
        sessions = client.get("/api/v1/sessions", params=PROJECT).json()["sessions"]
        handoffs = client.get("/api/v1/handoffs", params=PROJECT).json()["handoffs"]
        page = client.get("/api/v1/projects/default/acme-shop/pages/sessions/list-2.md")
    assert projects == {"acme-shop"}
    assert [s["session_id"] for s in sessions] == ["work-1"]
    assert handoffs == [] and page.status_code == 404


def test_the_project_remote_is_recorded_at_capture(
    own_server: ServerProcess, tmp_path: Path
) -> None:
    server = own_server  # the only project of its data dir
    checkout = make_checkout(tmp_path / "shop", "git@github.com:acme/shop.git")
    env = hook_env(server.data_dir, server.url)
    payload = {"session_id": "rm-1", "cwd": str(checkout), "prompt": "hello"}
    run_hook("claude-code", "UserPromptSubmit", payload, env, checkout)
    with server.client() as client:
        projects = client.get("/api/v1/projects").json()["projects"]
    assert [(p["name"], p["remote"]) for p in projects] == [("acme-shop", "github.com/acme/shop")]


def test_a_session_cut_off_minutes_ago_is_shown_to_the_next_agent_at_once(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    with app_client(data_dir) as client:  # the default idle end: 30 minutes
        post(client, "UserPromptSubmit", "cut-1", checkout, "p", prompt="migrate the orders")
        post(
            client,
            "PostToolUse",
            "cut-1",
            checkout,
            "t",
            tool_name="Edit",
            tool_input={"file_path": f"{checkout}/db/orders.sql"},
        )
        start = {**PROJECT, "agent": "codex", "session_id": "next-1", "cwd": str(checkout)}
        answer = client.get("/handoff", params=start).json()
    assert answer["recovery"]["session_id"] == "cut-1"
    assert answer["recovery"]["files_edited"] == ["db/orders.sql"]
    assert "migrate the orders" in answer["context"] and "db/orders.sql" in answer["context"]


def test_a_start_after_compaction_re_grounds_instead_of_repeating_the_claim(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    with app_client(data_dir) as client:
        client.put(
            "/api/v1/projects/default/acme-shop/pages/_rules/style.md",
            json={"body": "Type hints everywhere."},
        )
        opened = {**PROJECT, "summary": "finish the cart page", "next_steps": ["tests"]}
        client.post("/api/v1/handoffs", json=opened)
        start = {**PROJECT, "agent": "claude-code", "session_id": "c-1", "cwd": str(checkout)}
        first = client.get("/handoff", params={**start, "source": "startup"}).json()
        for i, prompt in enumerate(["add the cart page", "now the totals", "and the tests"]):
            post(client, "UserPromptSubmit", "c-1", checkout, f"p{i}", prompt=prompt)
        again = client.get("/handoff", params={**start, "source": "compact"}).json()
        recap = client.get("/recap", params=start).json()
    assert first["handoff"]["summary"] == "finish the cart page"
    context = again["context"]
    assert "Re-grounding" in context and "add the cart page" in context
    assert (
        "and the tests" in context and "Started from the handoff: finish the cart page" in context
    )
    assert "## Handoff from" not in context and "Type hints everywhere" not in context
    assert context.startswith(NOTE) and context.rstrip().endswith("</untrusted-history>")
    assert "Re-grounding" in recap["context"] and "Type hints everywhere" in recap["context"]


def test_recap_and_brief_refuse_bad_input_clearly(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        no_scope = client.get("/recap", params={"agent": "codex"})
        budget = client.get("/brief", params={**PROJECT, "budget": "lots"})
        relative = client.get("/recap", params={"cwd": "not/absolute"})
    assert no_scope.status_code == 400 and "project" in no_scope.text
    assert budget.status_code == 400 and "budget" in budget.text
    assert relative.status_code == 400 and "absolute cwd" in relative.text


def test_subagent_start_gets_the_brief_and_does_not_end_the_session(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    env = hook_env(server.data_dir, server.url)
    with server.client() as client:
        client.put(
            "/api/v1/projects/default/acme-shop/pages/_rules/style.md",
            json={"body": "Type hints everywhere. " * 800},
        )
    base = {"session_id": "parent-1", "cwd": str(checkout)}
    run_hook("claude-code", "UserPromptSubmit", {**base, "prompt": "explore it"}, env, checkout)
    sub = {**base, "agent_id": "a-7", "agent_type": "Explore"}
    code, out = run_hook("claude-code", "SubagentStart", sub, env, checkout)
    stop = {**sub, "last_assistant_message": "Found it in cart.py"}
    run_hook("claude-code", "SubagentStop", stop, env, checkout)
    assert code == 0 and out["hookSpecificOutput"]["hookEventName"] == "SubagentStart"
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "Type hints everywhere" in context and len(context) < 10_000
    with server.client() as client:
        answer = client.get("/api/v1/sessions/parent-1/observations", params=PROJECT).json()
    kinds = [o["kind"] for o in answer["observations"]]
    assert kinds == ["subagent-stop", "subagent-start", "user-prompt"]
    assert answer["session"]["ended_at"] is None


def test_a_prompt_asking_to_recap_gets_the_re_grounding(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "recap", "git@github.com:acme/recap.git")
    env = hook_env(server.data_dir, server.url)
    base = {"session_id": "rc-1", "cwd": str(checkout)}
    run_hook("claude-code", "UserPromptSubmit", {**base, "prompt": "fix the totals"}, env, checkout)
    code, out = run_hook(
        "claude-code", "UserPromptSubmit", {**base, "prompt": "/recap"}, env, checkout
    )
    assert code == 0 and out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "fix the totals" in out["hookSpecificOutput"]["additionalContext"]


def test_hook_help_answers_without_reading_stdin_and_hook_is_listed() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "ai_memory", "hook", "--help"],
        stdin=subprocess.PIPE,  # held open: a command reading it would never return
        stdout=subprocess.PIPE,
        env=clean_env(),
    )
    try:
        proc.wait(timeout=60)
    finally:
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        out = proc.stdout.read()
        proc.stdout.close()
    assert proc.returncode == 0 and b"usage: ai-memory hook --agent" in out
    listing = subprocess.run(
        [sys.executable, "-m", "ai_memory", "--help"], capture_output=True, env=clean_env()
    )
    assert b" hook " in listing.stdout


def test_installed_hooks_carry_server_data_dir_and_each_agents_limits(tmp_path: Path) -> None:
    from ai_memory.cli import hook_install

    data = tmp_path / "data"
    url = "http://127.0.0.1:49411"
    codex = hook_install.install({}, "codex", data, "/bin/ai-memory", url)
    end = codex["hooks"]["SessionEnd"][0]["hooks"][0]
    assert end["timeout"] == 3 and f"--server {url}" in end["command"]
    assert f"--data-dir {data}" in end["command"]
    claude = hook_install.install({}, "claude-code", data, "/bin/ai-memory", url)
    assert "SubagentStart" in claude["hooks"] and "PostToolUseFailure" in claude["hooks"]
    cursor = hook_install.install({"version": 1}, "cursor", None, "/bin/ai-memory", url)
    (entry,) = cursor["hooks"]["sessionStart"]
    assert entry["command"].endswith(f"--event sessionStart --server {url}")
    assert hook_install.uninstall(cursor, "cursor") == {"version": 1}
    plugin = hook_install.plugin_source("opencode", data, "/bin/ai-memory", url)
    assert json.dumps(["/bin/ai-memory", "hook", "--agent", "opencode"])[:-1] in plugin
    assert '"tool.execute.after"' in plugin and url in plugin


def test_setup_on_another_port_sends_a_hook_through_and_reads_it_back(
    server: ServerProcess, tmp_path: Path
) -> None:
    """serve on a non-default port + setup --server: the hooks post there too."""
    from tests.conftest import run_cli

    home = tmp_path / "home"
    home.mkdir()
    env = clean_env(HOME=str(home))
    done = run_cli(
        "setup", "--agent", "gemini", "--server", server.url, "--no-service",
        data_dir=server.data_dir, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert b"a test event sent through the installed gemini hook reached" in done.stdout
    settings = json.loads((home / ".gemini" / "settings.json").read_text())
    command = settings["hooks"]["BeforeAgent"][0]["hooks"][0]["command"]
    assert f"--server {server.url}" in command
    assert not list((server.data_dir / "spool").glob("*.json"))
    codex = run_cli(
        "setup", "--agent", "codex", "--server", server.url, "--no-service",
        data_dir=server.data_dir, env=env, cwd=tmp_path,
    )  # fmt: skip
    assert codex.returncode == 2
    assert b"/hooks" in codex.stdout + codex.stderr and b"trust" in codex.stderr
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    assert hooks["SessionEnd"][0]["hooks"][0]["timeout"] == 3


def test_a_session_with_a_prompt_in_an_unknown_folder_still_creates_its_project(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "new", "git@github.com:acme/new.git")
    with app_client(data_dir) as client:
        post(client, "SessionStart", "n-1", checkout, "s", source="startup")
        post(client, "UserPromptSubmit", "n-1", checkout, "p", prompt="first work here")
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        rows = conn.execute("SELECT name, remote FROM projects").fetchall()
    finally:
        conn.close()
    assert rows == [("acme-new", None)]
