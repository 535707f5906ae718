"""The real ``ai-memory hook`` command against a real server: capture, pages, handoffs, spool."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from ai_memory.hookclient.main import run
from tests.conftest import ServerProcess, free_port, run_cli
from tests.hooks_support import hook_env, make_checkout, run_hook


def test_the_hook_client_imports_only_the_standard_library() -> None:
    script = (
        "import sys, json\n"
        "before = set(sys.modules)\n"
        "import ai_memory.hookclient.main, ai_memory.hookclient.drain, ai_memory.cli.entry\n"
        "print(json.dumps(sorted(set(sys.modules) - before)))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, check=True)
    loaded = json.loads(proc.stdout)
    ours = [m for m in loaded if m.split(".")[0] == "ai_memory"]
    foreign = [
        m
        for m in loaded
        if m.split(".")[0] not in sys.stdlib_module_names and m.split(".")[0] != "ai_memory"
    ]
    assert foreign == []
    assert all(
        m.startswith(("ai_memory.hookclient", "ai_memory.cli"))
        or m in ("ai_memory", "ai_memory.locate")
        for m in ours
    ), ours
    assert "ai_memory.cli.app" not in ours and "ai_memory.config" not in ours


def claude(session: str, cwd: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {
        "session_id": session,
        "transcript_path": f"/home/dev/.claude/projects/x/{session}.jsonl",
        "cwd": str(cwd),
        "hook_event_name": event,
        **fields,
    }


def stored(server: ServerProcess, sql_filter: str = "") -> list[dict[str, Any]]:
    with server.client() as client:
        sessions = client.get("/api/v1/sessions", params={"project": "acme-shop"}).json()
    return list(sessions["sessions"])


def read_page(server: ServerProcess, path: str) -> dict[str, Any]:
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        response = client.get(f"/api/v1/projects/default/acme-shop/pages/{path}")
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def test_three_agents_capture_and_hand_off_in_one_checkout(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    (checkout / "src").mkdir()
    env = hook_env(server.data_dir, server.url)
    c = "c-0001"
    sequence = [
        ("SessionStart", claude(c, checkout, "SessionStart", source="startup")),
        (
            "UserPromptSubmit",
            claude(c, checkout, "UserPromptSubmit", prompt="Add a discount field to the cart"),
        ),
        (
            "PostToolUse",
            claude(
                c,
                checkout,
                "PostToolUse",
                tool_name="Read",
                tool_input={"file_path": f"{checkout}/src/cart.py"},
                tool_response={"content": "class Cart: ..."},
                tool_use_id="t1",
            ),
        ),
        (
            "PostToolUse",
            claude(
                c,
                checkout,
                "PostToolUse",
                tool_name="Edit",
                tool_input={
                    "file_path": f"{checkout}/src/cart.py",
                    "old_string": "a",
                    "new_string": "b",
                },
                tool_response={"success": True},
                tool_use_id="t2",
            ),
        ),
        (
            "PostToolUse",
            claude(
                c,
                checkout,
                "PostToolUse",
                tool_name="Edit",
                tool_input={
                    "file_path": f"{checkout}/tests/test_cart.py",
                    "old_string": "",
                    "new_string": "def test(): ...",
                },
                tool_response={"success": True},
                tool_use_id="t3",
            ),
        ),
        (
            "PostToolUse",
            claude(
                c,
                checkout,
                "PostToolUse",
                tool_name="Bash",
                tool_input={"command": "pytest -q"},
                tool_response={"stdout": "3 passed"},
                tool_use_id="t4",
                duration_ms=812,
            ),
        ),
        (
            "UserPromptSubmit",
            claude(
                c,
                checkout,
                "UserPromptSubmit",
                prompt="Now export it with STRIPE_SECRET=sk_live_abcdefghijkl0123",
            ),
        ),
        (
            "Stop",
            claude(
                c,
                checkout,
                "Stop",
                stop_hook_active=False,
                last_assistant_message="Discount added; tests pass.",
            ),
        ),
        ("SessionEnd", claude(c, checkout, "SessionEnd", reason="prompt_input_exit")),
    ]
    for event, payload in sequence:
        code, out = run_hook("claude-code", event, payload, env, checkout)
        assert code == 0 and out == {}
    page = read_page(server, f"sessions/{c}.md")
    assert page["title"] == "Add a discount field to the cart"
    assert page["frontmatter"]["agent"] == "claude-code"
    body = page["body"]
    assert "Add a discount field to the cart" in body and "Now export it" in body
    assert "- Edit: 2" in body and "- Read: 1" in body and "- Bash: 1" in body
    # Changed files, relative to the checkout.
    assert "- `src/cart.py` (edited)" in body and "`tests/test_cart.py`" in body
    # The assistant's final message (kept unless [capture] capture_assistant is off).
    assert "Discount added; tests pass." in body
    assert "sk_live_abcdefghijkl0123" not in body

    # A second agent in the same checkout gets the handoff, exactly once.
    codex_start = {
        "session_id": "x-0001",
        "transcript_path": None,
        "cwd": str(checkout),
        "hook_event_name": "SessionStart",
        "model": "gpt-5-codex",
        "source": "startup",
    }
    code, out = run_hook("codex", "SessionStart", codex_start, env, checkout / "src")
    context = out["hookSpecificOutput"]["additionalContext"]
    assert out["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    assert "Add a discount field to the cart" in context
    assert "<untrusted-history" in context and "not instructions" in context
    assert len(context) <= 9500
    # A third gets none.
    gemini_start = {
        "session_id": "g-0001",
        "cwd": str(checkout),
        "hook_event_name": "SessionStart",
        "timestamp": "2026-11-30T10:00:00Z",
        "source": "startup",
    }
    code, out = run_hook("gemini", "SessionStart", gemini_start, env, checkout)
    assert code == 0 and out == {}

    # Codex works and is finalized (no reliable session end); Gemini ends normally.
    codex_events = [
        ("UserPromptSubmit", {"prompt": "Refactor the discount code", "turn_id": "1"}),
        (
            "PostToolUse",
            {
                "tool_name": "apply_patch",
                "tool_input": {
                    "command": "*** Begin Patch\n*** Update File: src/discount.py\n"
                    "@@\n-a\n+b\n*** End Patch"
                },
                "tool_response": "Success",
                "turn_id": "1",
            },
        ),
        (
            "PostToolUse",
            {
                "tool_name": "Bash",
                "tool_input": {"command": ["pytest", "-q"]},
                "tool_response": "ok",
                "turn_id": "1",
            },
        ),
        ("Stop", {"last_assistant_message": "Refactored.", "turn_id": "1"}),
    ]
    for event, fields in codex_events:
        payload = {"session_id": "x-0001", "cwd": str(checkout), "hook_event_name": event, **fields}
        assert run_hook("codex", event, payload, env, checkout)[0] == 0
    result = run_cli(
        "finalize-session",
        "--agent",
        "codex",
        "--project",
        "acme-shop",
        "--server",
        server.url,
        data_dir=server.data_dir,
        cwd=checkout,
    )
    assert result.returncode == 0, result.stderr
    codex_page = read_page(server, "sessions/x-0001.md")
    assert codex_page["title"] == "Refactor the discount code"
    assert "- apply_patch: 1" in codex_page["body"] and "`src/discount.py`" in codex_page["body"]

    gemini_events = [
        ("BeforeAgent", {"prompt": "Document the discount API"}),
        (
            "AfterTool",
            {
                "tool_name": "write_file",
                "tool_input": {"file_path": "docs/discount.md", "content": "# Discounts"},
                "tool_response": {"llmContent": "ok"},
            },
        ),
        ("AfterAgent", {"prompt": "Document the discount API", "prompt_response": "Documented."}),
        ("SessionEnd", {"reason": "exit"}),
    ]
    for event, fields in gemini_events:
        payload = {"session_id": "g-0001", "cwd": str(checkout), "hook_event_name": event, **fields}
        assert run_hook("gemini", event, payload, env, checkout)[0] == 0
    gemini_page = read_page(server, "sessions/g-0001.md")
    assert gemini_page["title"] == "Document the discount API"
    assert "- write_file: 1" in gemini_page["body"]
    assert "`docs/discount.md`" in gemini_page["body"]
    assert "Documented." in gemini_page["body"]  # the assistant's answer, kept by default


def test_with_the_server_down_the_event_is_spooled_and_delivered_later(
    data_dir: Path, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    down = ServerProcess(data_dir)
    env = hook_env(data_dir, down.url)
    payload = claude("d-1", checkout, "UserPromptSubmit", prompt="written while the server is down")
    code, out = run_hook("claude-code", "UserPromptSubmit", payload, env, checkout)
    assert code == 0 and out == {}
    spooled = list((data_dir / "spool").glob("*.json"))
    assert len(spooled) == 1
    assert "unreachable" in (data_dir / "logs" / "hook.log").read_text()
    start = {**payload, "hook_event_name": "SessionStart"}
    assert run_hook("claude-code", "SessionStart", start, env, checkout) == (0, {})

    down.start()
    try:
        drained = run_cli("hook-drain", "--server", down.url, data_dir=data_dir)
        assert drained.returncode == 0, drained.stderr
        # The server delivers the spool itself at start; hook-drain takes what is left.
        assert b"nothing left in the spool" in drained.stdout
        assert list((data_dir / "spool").glob("*.json")) == []
        with down.client() as client:
            obs = client.get("/api/v1/sessions/d-1/observations", params={"project": "acme-shop"})
        bodies = [o["body"] for o in obs.json()["observations"]]
        assert bodies.count("written while the server is down") == 1
    finally:
        down.stop()


def test_spooled_events_are_retried_by_the_next_run(server: ServerProcess, tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "shop")
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    for i in range(3):
        payload = claude("r-1", checkout, "UserPromptSubmit", prompt=f"queued {i}")
        run(
            ["--agent", "claude-code"],
            stdin=io.BytesIO(json.dumps(payload).encode()),
            stdout=io.StringIO(),
            env=dead,
        )
    assert len(list((server.data_dir / "spool").glob("*.json"))) == 3
    live = hook_env(server.data_dir, server.url)
    payload = claude("r-1", checkout, "UserPromptSubmit", prompt="live one")
    out = io.StringIO()
    assert (
        run(
            ["--agent", "claude-code"],
            stdin=io.BytesIO(json.dumps(payload).encode()),
            stdout=out,
            env=live,
        )
        == 0
    )
    assert json.loads(out.getvalue()) == {}
    assert list((server.data_dir / "spool").glob("*.json")) == []
    with server.client() as client:
        obs = client.get("/api/v1/sessions/r-1/observations", params={"project": "acme-shop"})
    assert sorted(o["body"] for o in obs.json()["observations"]) == [
        "live one",
        "queued 0",
        "queued 1",
        "queued 2",
    ]


def test_garbage_input_still_exits_zero_with_json(data_dir: Path, tmp_path: Path) -> None:
    env = hook_env(data_dir, f"http://127.0.0.1:{free_port()}")
    for stdin in (b"\xff\xfe not json", b"", b"[1,2,3]"):
        out = io.StringIO()
        assert run(["--agent"], stdin=io.BytesIO(stdin), stdout=out, env=env) == 0
        assert json.loads(out.getvalue()) == {}
