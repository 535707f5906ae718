"""Helpers for the consolidation tests: a captured session, a provider answer, a server."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.conftest import ServerProcess, clean_env
from tests.fake_llm import FakeLlm

PROJECT = {"workspace": "default", "project": "shop"}
PAGES = "/api/v1/projects/default/shop/pages"


def llm_env(fake: FakeLlm, **consolidation: str) -> dict[str, str]:
    """The environment that turns the openai-compat provider on against ``fake``."""
    env = {
        "AI_MEMORY_LLM__PROVIDER": "openai-compat",
        "AI_MEMORY_LLM__MODEL": "fake-model",
        "AI_MEMORY_LLM__BASE_URL": fake.openai_url,
        "AI_MEMORY_LLM__TIMEOUT_S": "120",
    }
    env.update({f"AI_MEMORY_CONSOLIDATION__{k.upper()}": v for k, v in consolidation.items()})
    return clean_env(**env)


def llm_server(data_dir: Path, fake: FakeLlm, **consolidation: str) -> ServerProcess:
    return ServerProcess(data_dir, env=llm_env(fake, **consolidation))


def session_items(sid: str, cwd: str = "/work/shop") -> list[dict[str, Any]]:
    """A real-looking Claude Code session: a prompt, a failed and a good command, an edit,
    the final answer, the end."""
    n = 0

    def item(event: str, **body: Any) -> dict[str, Any]:
        nonlocal n
        n += 1
        params = {**PROJECT, "agent": "claude-code", "session_id": sid, "cwd": cwd}
        return {
            "params": {**params, "event": event, "ingest_key": f"{sid}-{n}"},
            "body": {"hook_event_name": event, "session_id": sid, "cwd": cwd, **body},
        }

    return [
        item("SessionStart", source="startup"),
        item("UserPromptSubmit", prompt="The checkout test fails: 'database is locked'; fix it"),
        item(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "pytest tests/test_checkout.py"},
            tool_response={"stdout": "E sqlite3.OperationalError: database is locked"},
        ),
        item(
            "PostToolUse",
            tool_name="Edit",
            tool_input={"file_path": f"{cwd}/shop/db.py", "old_string": "x", "new_string": "y"},
            tool_response={"filePath": f"{cwd}/shop/db.py"},
        ),
        item(
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": "pytest tests/test_checkout.py"},
            tool_response={"stdout": "3 passed", "stderr": ""},
        ),
        item(
            "Stop",
            last_assistant_message="Fixed: the checkout opens SQLite in WAL mode with a 5 s "
            "busy_timeout, so the worker and the web process no longer lock each other out.",
        ),
        item("SessionEnd", reason="exit"),
    ]


def capture(client: httpx.Client, sid: str) -> None:
    """Drive the session through /hook/batch and wait for its page."""
    answer = client.post("/hook/batch", json=session_items(sid))
    assert {r["status"] for r in answer.json()["results"]} == {202}, answer.text
    flushed = client.post("/api/v1/sessions/flush", params={"timeout": 30}).json()
    assert flushed["pending"] == 0


def durable_answer(sid: str) -> dict[str, Any]:
    """What a provider would answer for :func:`session_items`."""
    return {
        "title": "Fix 'database is locked' in the checkout tests",
        "summary": "The checkout tests failed with 'database is locked'. The session switched "
        "SQLite to WAL mode with a 5 s busy_timeout in shop/db.py; the tests pass.",
        "pages": [
            {
                "folder": "concepts",
                "slug": "sqlite-wal",
                "title": "SQLite WAL mode in the shop",
                "body": "The shop opens SQLite in WAL mode: readers never block the writer.",
                "links": ["decisions/use-wal.md", "gotchas/database-is-locked.md"],
                "tags": ["sqlite"],
            },
            {
                "folder": "decisions",
                "slug": "use-wal",
                "title": "Use WAL mode for the shop database",
                "body": "Decided: WAL mode with busy_timeout=5000, since the worker and the web "
                "process write at once. Rejected: a global lock.",
                "links": ["concepts/sqlite-wal.md"],
            },
            {
                "folder": "gotchas",
                "slug": "database-is-locked",
                "title": "'database is locked' in tests",
                "body": "Symptom: sqlite3.OperationalError: database is locked. Cause: rollback "
                "journal with two writers. Fix: WAL plus busy_timeout.",
                "links": ["concepts/sqlite-wal.md", "procedures/unknown.md"],
            },
            {
                "folder": "procedures",
                "slug": "run-checkout-tests",
                "title": "Run the checkout tests",
                "body": "1. `pytest tests/test_checkout.py`\n2. Expect 3 passed.",
            },
            {
                "folder": "concepts",
                "slug": "house-rules",
                "title": "House rules (rewritten)",
                "body": "This must never land: the page is pinned.",
            },
        ],
    }


def wait_for(check: Callable[[], Any], timeout: float = 60.0, what: str = "condition") -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def db_rows(data_dir: Path, sql: str, *args: Any) -> list[sqlite3.Row]:
    conn = sqlite3.connect(data_dir / "db/memory.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()
