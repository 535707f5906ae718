"""A tool call as text a person reads: its result as the tool printed it, its outcome, its kind.

Agents send a tool's result as an object (Claude Code's Bash:
``{"stdout": …, "stderr": …, "interrupted": …}``; MCP: ``{"content": [{"text": …}]}``).
Dumped as JSON, its lines would join into one string with ``\\n`` escapes, and a
``KEY=secret`` redaction would run to the end of that string, taking every later line
with it. Rendered as the text the tool printed, each line is redacted on its own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Literal

Action = Literal["edit", "read", "run", "search", "mcp", "other"]

# Lists within lists a tool's printed text is looked for in.
PART_DEPTH = 8
# The keys holding what a tool printed, in the order a person reads them.
_TEXT_KEYS = (
    "stdout",
    "output",
    "llmContent",  # Gemini CLI
    "content",
    "result",
    "text",
    "message",
    "stderr",
    "error",
)
_EXIT_KEYS = ("exit_code", "exitCode", "exit_status", "returncode", "code")
_EXIT_IN_TEXT = re.compile(r"\bexit(?:ed with)?[ _]?(?:code|status)[: ]+(-?\d{1,4})\b", re.I)
_EDIT_TOOLS = frozenset(
    {
        "edit",
        "multiedit",
        "write",
        "notebookedit",
        "apply_patch",
        "applypatch",
        "write_file",
        "replace",
        "create_file",
        "str_replace_based_edit_tool",
        "patch",
    }
)
_READ_TOOLS = frozenset(
    {"read", "read_file", "read_many_files", "view", "notebookread", "cat", "list_directory", "ls"}
)
_SEARCH_TOOLS = frozenset(
    {"grep", "glob", "search", "search_file_content", "codebase_search", "websearch", "webfetch"}
)
_RUN_TOOLS = frozenset(
    {"bash", "shell", "run_shell_command", "exec_command", "local_shell", "terminal", "command"}
)


def action_of(tool: str | None, event: str = "") -> Action:
    """What kind of call this was: an edit changes files, a read only looks at them."""
    name = (tool or "").casefold()
    if name.startswith("mcp__") or name.startswith("mcp_") or name == "mcp":
        return "mcp"
    if event == "afterFileEdit" or name in _EDIT_TOOLS:
        return "edit"
    if name in _READ_TOOLS:
        return "read"
    if name in _SEARCH_TOOLS:
        return "search"
    if name in _RUN_TOOLS:
        return "run"
    return "other"


def response_text(value: object, limit: int = 65536) -> str:
    """A tool's result as the text it printed (bounded); other shapes as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, Mapping) and any(key in value for key in _TEXT_KEYS):
        parts = [_part(value.get(key), limit) for key in _TEXT_KEYS if value.get(key)]
        return "\n".join(part for part in parts if part)[:limit]
    if isinstance(value, list):
        texts = [_part(item, limit) for item in value[:50]]
        if any(texts):
            return "\n".join(t for t in texts if t)[:limit]
    return _json(value)[:limit]


def exit_code(response: object, error: object, given: object) -> int | None:
    """The exit status a call reported, from its field or its text ("Exit code 2")."""
    code = _code(given)
    if code is None and isinstance(response, Mapping):
        for key in _EXIT_KEYS:
            code = _code(response.get(key))
            if code is not None:
                break
    if code is not None:
        return code
    for text in (error, response):
        if isinstance(text, str):
            found = _EXIT_IN_TEXT.search(text[:4096])
            if found:
                return int(found.group(1))
    return None


def _code(value: object) -> int | None:
    """An exit status given as a number or its digits (a flag, out of range: none)."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if -1000 < value < 10000 else None
    if isinstance(value, str) and re.fullmatch(r"-?\d{1,4}", value.strip()):
        return int(value)
    return None


def _part(value: object, limit: int, depth: int = 0) -> str:
    """The text of one printed part: each item looked at once, at most 50 of a list and
    :data:`PART_DEPTH` lists deep (what a tool prints is never nested deeper), so the
    work is bounded by the body, never by the shape of its nesting."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, Mapping):
        text = value.get("text")
        return text[:limit] if isinstance(text, str) else ""
    if isinstance(value, list) and depth < PART_DEPTH:
        parts = (_part(item, limit, depth + 1) for item in value[:50])
        return "\n".join(part for part in parts if part)[:limit]
    return ""


def _json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)
