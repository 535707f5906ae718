"""The session page of a realistic 30-event Claude Code session, against a golden file.

Set ``AI_MEMORY_UPDATE_GOLDEN=1`` to rewrite the golden after a deliberate change.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from tests.hooks_support import app_client, make_checkout

GOLDEN = Path(__file__).parent / "golden" / "session_page.md"
SESSION = "golden-1"


def claude_session(checkout: Path) -> list[dict[str, Any]]:
    """Reads, edits, a failed lint, a failed then passing test run, a commit, a decision,
    an open question, an MCP write, a subagent and a compaction: 30 events."""
    root = str(checkout)

    def tool(name: str, tool_input: dict[str, Any], response: object = None) -> tuple[str, dict]:
        body: dict[str, Any] = {"tool_name": name, "tool_input": tool_input}
        if response is not None:
            body["tool_response"] = response
        return "PostToolUse", body

    def bash(command: str, stdout: str) -> tuple[str, dict]:
        return tool("Bash", {"command": command}, {"stdout": stdout, "stderr": ""})

    def failed(command: str, error: str) -> tuple[str, dict]:
        body = {"tool_name": "Bash", "tool_input": {"command": command}, "error": error}
        return "PostToolUseFailure", body

    events: list[tuple[str, dict[str, Any]]] = [
        ("SessionStart", {"source": "startup"}),
        (
            "UserPromptSubmit",
            {
                "prompt": "Fix the rounding bug in the cart total and add a test for it. "
                "Not sure whether invoices need the same fix."
            },
        ),
        tool("Read", {"file_path": f"{root}/src/cart.py"}, {"type": "text"}),
        tool("Grep", {"pattern": "round(", "path": f"{root}/src"}),
        tool("Read", {"file_path": f"{root}/tests/test_cart.py"}),
        (
            "Stop",
            {
                "last_assistant_message": "The total rounds a float. We decided to use "
                "Decimal with ROUND_HALF_UP instead of float rounding. "
                "Should the discount apply before tax?"
            },
        ),
        ("UserPromptSubmit", {"prompt": "Apply the discount before tax, then go ahead."}),
        tool("Edit", {"file_path": f"{root}/src/cart.py", "old_string": "a", "new_string": "b"}),
        tool("Edit", {"file_path": f"{root}/src/cart.py", "old_string": "c", "new_string": "d"}),
        tool(
            "Write", {"file_path": f"{root}/tests/test_rounding.py", "content": "def test(): ..."}
        ),
        failed("make lint", "Exit code 2\nmake: *** No rule to make target 'lint'.  Stop."),
        failed(
            "pytest -q",
            "Exit code 1\nFAILED tests/test_rounding.py::test_half_up - assert 10.0 == 10.01\n"
            "1 failed, 3 passed in 0.12s",
        ),
        tool("Edit", {"file_path": f"{root}/src/cart.py", "old_string": "e", "new_string": "f"}),
        bash("pytest -q", "....\n4 passed in 0.10s"),
        (
            "Stop",
            {
                "last_assistant_message": "Fixed: totals use Decimal, the discount applies "
                "before tax, and the 4 tests pass."
            },
        ),
        ("UserPromptSubmit", {"prompt": "Commit it."}),
        bash(
            'git add src tests && git commit -m "Round cart totals half up with Decimal"',
            "[main 3f2a9c1] Round cart totals half up with Decimal\n 2 files changed",
        ),
        (
            "Stop",
            {
                "last_assistant_message": "Committed 3f2a9c1.\n\nNext steps:\n"
                "- Add a lint target to the Makefile\n"
                "- Check that invoice totals use the same rounding"
            },
        ),
        tool(
            "mcp__ai-memory__memory_write",
            {"path": "decisions/rounding.md", "body": "Decimal, half up."},
            {"content": [{"type": "text", "text": "written"}]},
        ),
        tool("LS", {"path": root}),
        ("Notification", {"message": "Claude is waiting for your input"}),
        ("SubagentStart", {"agent_id": "a1", "agent_type": "Explore"}),
        tool("Read", {"file_path": f"{root}/src/invoice.py"}),
        (
            "SubagentStop",
            {
                "agent_id": "a1",
                "agent_type": "Explore",
                "last_assistant_message": "Invoices call cart.total(), so they get the fix.",
            },
        ),
        ("PreCompact", {"trigger": "auto"}),
        ("PostCompact", {"compact_summary": "Fixed cart rounding; committed 3f2a9c1."}),
        ("UserPromptSubmit", {"prompt": "What about the invoice PDF? Leave that for later."}),
        bash("git status --short", ""),
        (
            "Stop",
            {
                "last_assistant_message": "The invoice PDF formats totals itself. It is an "
                "open question whether it should reuse cart.total()."
            },
        ),
        ("SessionEnd", {"reason": "prompt_input_exit"}),
    ]
    assert len(events) == 30
    params = {"agent": "claude-code", "session_id": SESSION, "cwd": root}
    return [
        {
            "params": {**params, "event": event, "ingest_key": f"g{i}"},
            "body": {"hook_event_name": event, "session_id": SESSION, "cwd": root, **body},
        }
        for i, (event, body) in enumerate(events)
    ]


def normalised(body: str, checkout: Path) -> str:
    body = body.replace(str(checkout), "<checkout>")
    return re.sub(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?", "<time>", body)


def test_a_realistic_session_page_shows_each_section(data_dir: Path, tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "shop")
    with app_client(data_dir) as client:
        results = client.post("/hook/batch", json=claude_session(checkout)).json()["results"]
        assert {r["status"] for r in results} == {202}
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get(f"/api/v1/projects/default/acme-shop/pages/sessions/{SESSION}.md")
        assert page.status_code == 200, page.text
        handoff = client.get(
            "/api/v1/handoffs", params={"workspace": "default", "project": "acme-shop"}
        ).json()["handoffs"][0]
    body = normalised(page.json()["body"], checkout)
    if os.environ.get("AI_MEMORY_UPDATE_GOLDEN") or not GOLDEN.exists():
        GOLDEN.write_text(body, encoding="utf-8")
    assert body == GOLDEN.read_text(encoding="utf-8")
    # Changed apart from read, relative to the checkout; no MCP page, no checkout directory.
    assert "- `src/cart.py` (edited)" in body and "- `tests/test_rounding.py` (written)" in body
    assert "decisions/rounding.md" not in body.split("## Commands run")[0]
    assert "`src/invoice.py`" in body and "(edited)\n- `src/invoice.py`" not in body
    content = handoff["content"]
    assert content["next_steps"] == [
        "Add a lint target to the Makefile",
        "Check that invoice totals use the same rounding",
    ]
    assert any("reuse cart.total()" in q for q in content["open_questions"])
    assert content["files"] == ["src/cart.py", "tests/test_rounding.py"]
    assert content["failures"] == ["make lint", "pytest -q"]
