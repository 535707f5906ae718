"""Codex CLI: one JSON-lines "rollout" per session, ``~/.codex/sessions/Y/M/D/rollout-*.jsonl``.

Every line is ``{"timestamp", "type", "payload"}``: ``session_meta`` (id, cwd),
``response_item`` (the model conversation: messages, ``function_call`` and its
``function_call_output``), ``event_msg`` (``task_complete`` ends a turn) and
bookkeeping (``turn_context``, token counts) that is not part of the conversation.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ai_memory.importers.lines import iso_time, json_lines, text_of
from ai_memory.importers.model import Transcript, Unreadable, read_each
from ai_memory.importers.turns import TurnLog

AGENT = "codex"
# User-role messages Codex writes itself: the environment, instructions, skills.
_INJECTED = (
    "<environment_context>",
    "<user_instructions>",
    "<permissions",
    "# AGENTS.md",
    "<skills",
)
_CALLS = ("function_call", "custom_tool_call", "local_shell_call")
_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def root(home: Path, env: Mapping[str, str]) -> Path:
    configured = env.get("CODEX_HOME")
    return Path(configured) if configured else home / ".codex"


def transcripts(home: Path, env: Mapping[str, str]) -> Iterator[Transcript | Unreadable]:
    sessions = root(home, env) / "sessions"
    if not sessions.is_dir():
        return
    yield from read_each(AGENT, sorted(sessions.rglob("rollout-*.jsonl")), read)


def read(path: Path) -> Transcript:
    transcript = Transcript(AGENT, path.stem.removeprefix("rollout-")[-36:], str(path))
    log = TurnLog(transcript)
    skipped = [0]
    calls: dict[str, tuple[str, object]] = {}
    for number, record in json_lines(path, skipped):
        payload = record.get("payload")
        if not isinstance(payload, dict):
            continue
        at = iso_time(record.get("timestamp"))
        kind = record.get("type")
        if kind == "session_meta":
            _meta(transcript, payload)
            log.start(iso_time(payload.get("timestamp")) or at)
        elif kind == "response_item":
            _item(log, number, at, payload, calls)
        elif kind == "event_msg" and payload.get("type") == "task_complete":
            message = payload.get("last_agent_message")
            if isinstance(message, str):
                log.answer(str(number), at, message)
    transcript.skipped = skipped[0]
    return log.finish()


def _meta(transcript: Transcript, payload: Mapping[str, Any]) -> None:
    session = payload.get("id") or payload.get("session_id")
    if isinstance(session, str) and session:
        transcript.session_id = session
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and os.path.isabs(cwd):
        transcript.cwd = cwd


def _item(
    log: TurnLog,
    number: int,
    at: str | None,
    payload: Mapping[str, Any],
    calls: dict[str, tuple[str, object]],
) -> None:
    kind = payload.get("type")
    if kind == "message":
        text = text_of(payload.get("content"))
        if payload.get("role") == "user" and not text.lstrip().startswith(_INJECTED):
            log.prompt(str(number), at, text)
        elif payload.get("role") == "assistant":
            log.answer(str(number), at, text)
    elif kind in _CALLS:
        call_id = str(payload.get("call_id") or payload.get("id"))
        calls[call_id] = (str(payload.get("name") or "shell"), _arguments(payload))
    elif kind in _OUTPUTS:
        call_id = str(payload.get("call_id"))
        name, tool_input = calls.pop(call_id, ("tool", None))
        output = payload.get("output")
        log.tool(f"{number}:{call_id}", at, name, tool_input, output, failed=_failed(output))


def _arguments(payload: Mapping[str, Any]) -> object:
    """A call's input: ``arguments`` is a JSON string; a custom tool's ``input`` is text."""
    raw = payload.get("arguments", payload.get("input", payload.get("action")))
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"input": raw}
        raw = parsed
    if isinstance(raw, dict) and isinstance(raw.get("cmd"), str):
        return {"command": raw["cmd"]}
    if isinstance(raw, dict) and isinstance(raw.get("command"), list):
        return {"command": " ".join(str(part) for part in raw["command"])}
    return raw


def _failed(output: object) -> bool:
    if isinstance(output, dict):
        meta = output.get("metadata")
        code = meta.get("exit_code") if isinstance(meta, dict) else None
        return isinstance(code, int) and code != 0
    return False
