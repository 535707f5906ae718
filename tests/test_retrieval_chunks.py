"""What of a page gets embedded: a real session page, written by the server from hook
events, is embedded for what was said and done in it, not for the parts every session
page has."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ai_memory.retrieval.chunks import chunk_page
from tests.hooks_support import app_client

SCOPE = {"workspace": "default", "project": "shop", "agent": "claude-code", "session_id": "s1"}
PROMPTS = [
    "Why does the refund total round down for amounts in yen?",
    "Make the rounding follow the currency's minor unit instead.",
    "Now run the refund tests again and tell me which ones still fail.",
    # Quoted text that looks like the page's own frame, kept in its code block.
    "Read this log:\n- Agent: the payment agent retries twice\n(the total is off by a cent)\n"
    "# Timeline\nEnded (with a 500) after the third retry\nthe refund must post first",
]


def session_page(data_dir: Path) -> dict[str, Any]:
    events: list[dict[str, Any]] = [{"event": "SessionStart", "body": {"source": "startup"}}]
    events += [{"event": "UserPromptSubmit", "body": {"prompt": p}} for p in PROMPTS]
    tool = {"tool_name": "Bash", "tool_input": {"command": "pytest tests/test_refunds.py"}}
    events += [{"event": "PostToolUse", "body": {**tool, "tool_response": {"stdout": "3 passed"}}}]
    events += [{"event": "SessionEnd", "body": {"reason": "logout"}}]
    items = [
        {"params": {**SCOPE, "event": e["event"], "ingest_key": f"k{i}"}, "body": e["body"]}
        for i, e in enumerate(events)
    ]
    with app_client(data_dir) as client:
        assert client.post("/hook/batch", json=items).status_code == 200
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        page = client.get("/api/v1/projects/default/shop/pages/sessions/s1.md")
    assert page.status_code == 200, page.text
    result: dict[str, Any] = page.json()
    return result


def test_a_session_page_is_embedded_for_what_was_said_not_its_frame(data_dir: Path) -> None:
    page = session_page(data_dir)
    body = page["body"]
    # The page itself has every part the chunks leave out.
    for part in ("## Timeline", "## Tool calls", "- Agent: claude-code", "Ended (logout) after"):
        assert part in body, part
    chunks = chunk_page(page["title"], body, page["frontmatter"])
    text = "\n".join(chunks)
    for prompt in PROMPTS[1:3]:  # once: the timeline repeats each (the first is the title)
        assert text.count(prompt) == 1, prompt
    assert " ".join(PROMPTS[3].splitlines()) in text
    assert "pytest tests/test_refunds.py" in text  # what ran is what was done
    for frame in ("Agent: claude", "Started:", "user-prompt:", "Ended (logout", "```"):
        assert frame not in text, frame
    assert "(no file edited)" not in text


def test_a_hand_written_page_of_kind_session_keeps_every_section() -> None:
    body = (
        "# Ledger migration\n\n- Started: moving the ledger to Postgres\n\n"
        "## Timeline\n\nMay: cut over.\n"
    )
    text = " ".join(chunk_page("Ledger migration", body, {"kind": "session"}))
    assert "moving the ledger to Postgres" in text and "May: cut over." in text


def test_other_pages_keep_every_section() -> None:
    body = (
        "# Release history\n\n## Timeline\n\n- March: the first refund API shipped.\n\n"
        "## Tool calls\n\nThe queue worker retries tool calls twice.\n\n"
        "```python\nround_half_even(amount)\n```\n\n"
        "```bash\n# install the libpq headers first\napt install libpq-dev\n```\n"
    )
    chunks = chunk_page("Release history", body, {"kind": "concept"})
    text = " ".join(chunks)
    assert "the first refund API shipped" in text
    assert "retries tool calls twice" in text
    assert "round_half_even(amount)" in text and "```" not in text
    assert "# install the libpq headers first" in text  # a comment, not a heading
