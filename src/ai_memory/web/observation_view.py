"""Observations as a reader wants them: prompts, answers, and tool calls with their outcome.

The stored body of a tool call is ``<tool>: <input JSON>`` then ``-> <response>``
(and ``!! <error>``); the view pulls out the one argument that says what the
call did (the command, the file, the pattern) instead of showing raw JSON.
"""

from __future__ import annotations

import json
from typing import Any

SUMMARY_KEYS = (
    "command",
    "file_path",
    "path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
)
SUMMARY_CHARS = 200
SPEECH = {"user-prompt": "prompt", "stop": "answer", "subagent-stop": "answer"}


def view_of(observation: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "prompt"|"answer"|"tool"|"event", ...}`` for the session template."""
    kind = observation["kind"]
    meta = _meta(observation["meta"])
    base = {"id": observation["id"], "kind": kind, "at": observation["created_at"]}
    if kind in SPEECH:
        return {**base, "type": SPEECH[kind], "text": observation["body"]}
    if kind == "post-tool-use":
        return {**base, "type": "tool", **tool_call(observation, meta)}
    return {**base, "type": "event", "text": observation["body"][:SUMMARY_CHARS]}


def tool_call(observation: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    body: str = observation["body"]
    call, _, rest = body.partition("\n-> ")
    response, _, error = rest.partition("\n!! ") if rest else ("", "", "")
    if not rest and "\n!! " in call:
        call, _, error = call.partition("\n!! ")
    tool = observation["tool_name"] or call.split(":", 1)[0]
    raw_input = call.split(": ", 1)[1] if ": " in call else ""
    failed = bool(meta.get("failed"))
    code = meta.get("exit_code")
    return {
        "tool": tool,
        "summary": summarise(raw_input),
        "outcome": ("failed" + (f" (exit {code})" if code is not None else "")) if failed else "ok",
        "failed": failed,
        "response": response,
        "error": error,
        "files": meta.get("files") or [],
    }


def summarise(raw_input: str) -> str:
    try:
        data = json.loads(raw_input)
    except ValueError:
        return raw_input[:SUMMARY_CHARS]
    if isinstance(data, dict):
        for key in SUMMARY_KEYS:
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:SUMMARY_CHARS]
        parts = [f"{k}={v}" for k, v in data.items() if isinstance(v, str | int | float | bool)]
        return ", ".join(parts)[:SUMMARY_CHARS]
    return str(data)[:SUMMARY_CHARS]


def _meta(text: str | None) -> dict[str, Any]:
    try:
        data = json.loads(text or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}
