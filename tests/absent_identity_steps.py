"""The script the no-provider golden transcript was made with: every MCP tool, in order.

Changing it means regenerating the golden on the code before the LLM layer (9570d06).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Ref:
    """A value taken from an earlier step's answer: ``Ref("w1", "page_id")``."""

    step: str
    key: str


# label, tool, arguments. Projects keep the steps from disturbing each other's answers.
STEPS: list[tuple[str, str, dict[str, Any]]] = [
    ("status-empty", "memory_status", {"project": "gold"}),
    ("routing", "memory_install_self_routing", {}),
    ("routing-claude", "memory_install_self_routing", {"target": "claude"}),
    (
        "w1",
        "memory_write_page",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "title": "WAL",
            "body": "# WAL\n\nWAL lets readers proceed while one writer commits.\n\n## Steps\n\n"
            "- enable it\n",
            "tags": ["storage"],
            "entities": ["sqlite"],
        },
    ),
    (
        "w2",
        "memory_write_page",
        {
            "project": "gold",
            "path": "decisions/db.md",
            "title": "Use SQLite",
            "pinned": True,
            "body": "We chose SQLite for storage; see [[concepts/wal.md]] and [[gotchas/gone.md]].",
            "kind": "decision",
        },
    ),
    (
        "w3",
        "memory_write_page",
        {
            "project": "gold",
            "path": "_rules/style.md",
            "title": "Style",
            "body": "Keep functions short.",
            "kind": "rule",
        },
    ),
    (
        "w-again",
        "memory_write_page",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "title": "WAL",
            "body": "# WAL\n\nWAL lets readers proceed while one writer commits.\n\n## Steps\n\n"
            "- enable it\n",
            "tags": ["storage"],
            "entities": ["sqlite"],
        },
    ),
    (
        "w-stale",
        "memory_write_page",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "body": "x",
            "expected_page_id": 999_999,
        },
    ),
    (
        "w-exists",
        "memory_write_page",
        {
            "project": "gold",
            "path": "decisions/db.md",
            "body": "x",
            "create_only": True,
        },
    ),
    ("w-bad-path", "memory_write_page", {"project": "gold", "path": "../x.md", "body": "x"}),
    (
        "w-old",
        "memory_write_page",
        {
            "project": "gold",
            "path": "notes/old.md",
            "body": "Expired note about caches.",
            "expires_at": "2001-01-01",
        },
    ),
    ("read", "memory_read_page", {"project": "gold", "path": "concepts/wal.md"}),
    (
        "read-related",
        "memory_read_page",
        {
            "project": "gold",
            "path": "decisions/db.md",
            "include_related": True,
        },
    ),
    ("read-query", "memory_read_page", {"project": "gold", "query": "readers writer"}),
    ("read-missing", "memory_read_page", {"project": "gold", "path": "nope.md"}),
    ("read-both", "memory_read_page", {"project": "gold", "path": "a.md", "query": "b"}),
    (
        "patch",
        "memory_patch_page",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "op": "append",
            "content": "More text.",
            "expected_page_id": Ref("w1", "page_id"),
        },
    ),
    (
        "patch-stale",
        "memory_patch_page",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "op": "append",
            "content": "x",
            "expected_page_id": Ref("w1", "page_id"),
        },
    ),
    (
        "read-v1",
        "memory_read_page",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "version": 1,
            "max_chars": 200,
        },
    ),
    ("query", "memory_query", {"project": "gold", "query": "readers writer commits"}),
    (
        "query-explain",
        "memory_query",
        {
            "project": "gold",
            "query": "sqlite storage",
            "explain": True,
            "limit": 5,
        },
    ),
    ("query-alias", "memory_query", {"project": "gold", "q": "style functions", "n": 3}),
    (
        "query-filters",
        "memory_query",
        {
            "project": "gold",
            "query": "sqlite",
            "kind": "decision",
            "pin_first": True,
        },
    ),
    (
        "query-superseded",
        "memory_query",
        {
            "project": "gold",
            "query": "readers",
            "include_superseded": True,
            "include_expired": True,
        },
    ),
    ("query-global", "memory_query", {"query": "sqlite", "global": True}),
    ("query-none", "memory_query", {"project": "gold", "query": "zebra quasar"}),
    ("query-empty", "memory_query", {"project": "gold", "query": "  "}),
    ("query-bad-limit", "memory_query", {"project": "gold", "query": "x", "limit": 0}),
    ("recent", "memory_recent", {"project": "gold"}),
    (
        "feedback",
        "memory_feedback",
        {
            "project": "gold",
            "path": "concepts/wal.md",
            "signal": "helpful",
            "reason": "clear",
        },
    ),
    (
        "feedback-missing",
        "memory_feedback",
        {
            "project": "gold",
            "path": "nope.md",
            "signal": "stale",
        },
    ),
    (
        "h1",
        "memory_handoff_begin",
        {
            "project": "gold",
            "summary": "Halfway through the WAL work.",
            "next_steps": ["finish the docs"],
            "files_touched": ["src/wal.py"],
        },
    ),
    ("h2", "memory_handoff_begin", {"project": "gold", "summary": "A spare handoff."}),
    ("h-list", "memory_handoff_list", {"project": "gold"}),
    ("h-cancel", "memory_handoff_cancel", {"project": "gold", "handoff_id": Ref("h2", "id")}),
    ("h-cancel-missing", "memory_handoff_cancel", {"project": "gold", "handoff_id": 999}),
    ("h-accept", "memory_handoff_accept", {"project": "gold"}),
    ("h-accept-none", "memory_handoff_accept", {"project": "gold"}),
    ("h-list-any", "memory_handoff_list", {"project": "gold", "status": "any"}),
    (
        "obs",
        "memory_read_session_observations",
        {
            "project": "gold",
            "session_id": "gold-1",
        },
    ),
    (
        "obs-page",
        "memory_read_session_observations",
        {
            "project": "gold",
            "session_id": "gold-1",
            "limit": 1,
            "max_body_chars": 100,
        },
    ),
    ("obs-none", "memory_read_session_observations", {"project": "nosessions"}),
    ("briefing", "memory_briefing", {"project": "gold"}),
    ("briefing-small", "memory_briefing", {"project": "gold", "limit": 1}),
    ("lint", "memory_lint", {"project": "gold"}),
    ("sweep-dry", "memory_forget_sweep", {"project": "gold"}),
    ("sweep", "memory_forget_sweep", {"project": "gold", "dry_run": False}),
    ("delete", "memory_delete_page", {"project": "gold", "path": "_rules/style.md"}),
    ("delete-again", "memory_delete_page", {"project": "gold", "path": "_rules/style.md"}),
    ("restore", "memory_restore_page", {"project": "gold", "path": "_rules/style.md"}),
    ("restore-missing", "memory_restore_page", {"project": "gold", "path": "never.md"}),
    ("status", "memory_status", {"project": "gold"}),
    ("status-default", "memory_status", {}),
    # Added with cross-project messages and batch writes (message ids are row ids too).
    (
        "msg-no-origin",
        "memory_message_send",
        {"project": "msgs", "to_project": "gold", "subject": "s", "body": "b"},
    ),
    (
        "msg-origin",
        "memory_write_page",
        {"project": "msgs", "path": "index.md", "body": "# msgs\n"},
    ),
    (
        "msg-send",
        "memory_message_send",
        {"project": "msgs", "to_project": "gold", "subject": "Heads-up", "body": "WAL moved."},
    ),
    (
        "msg-send-codex",
        "memory_message_send",
        {
            "project": "msgs",
            "to_project": "gold",
            "subject": "For codex",
            "body": "x",
            "to_agent": "codex",
        },
    ),
    (
        "msg-send-unknown",
        "memory_message_send",
        {"project": "msgs", "to_project": "nowhere", "subject": "s", "body": "b"},
    ),
    ("msg-list", "memory_message_list", {"project": "gold"}),
    ("msg-outbox", "memory_message_list", {"project": "msgs", "box": "outbox"}),
    ("msg-pop", "memory_message_pop", {"project": "gold"}),
    ("msg-pop-none", "memory_message_pop", {"project": "gold"}),
    ("msg-cancel", "memory_message_cancel", {"message_id": 2}),
    ("msg-cancel-again", "memory_message_cancel", {"message_id": 2}),
    ("target", "memory_resolve_write_target", {"project": "gold"}),
    ("target-missing", "memory_resolve_write_target", {"project": "nowhere"}),
    (
        "batch",
        "memory_write_pages_batch",
        {"project": "gold", "pages": [{"path": "imported/a.md", "body": "# A\n\nImported."}]},
    ),
    (
        "batch-refused",
        "memory_write_pages_batch",
        {"project": "gold", "pages": [{"path": "imported/a.md", "body": "x", "create_only": True}]},
    ),
    (
        "batch-missing",
        "memory_write_pages_batch",
        {"project": "nowhere", "pages": [{"path": "a.md", "body": "x"}]},
    ),
]

# Captured before the script runs, for the observation tools.
HOOK_EVENTS = [
    ("UserPromptSubmit", {"prompt": "make the WAL checkpoint faster"}),
    (
        "PostToolUse",
        {
            "tool_name": "Bash",
            "tool_input": {"command": "pytest -q"},
            "tool_response": {"stdout": "3 passed"},
        },
    ),
]
