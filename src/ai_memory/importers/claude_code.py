"""Claude Code: one JSON-lines file per session, ``~/.claude/projects/<folder>/<id>.jsonl``.

Each line is one record: ``user`` (a prompt, or the results of tool calls),
``assistant`` (text and ``tool_use`` blocks), and bookkeeping (queue operations,
attachments, ``summary``, ``last-prompt``) that is not part of the conversation.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ai_memory.importers.lines import iso_time, json_lines, text_of
from ai_memory.importers.model import Transcript, Unreadable, read_each
from ai_memory.importers.turns import TurnLog

AGENT = "claude-code"
# Text Claude Code itself puts in a user record (slash commands, hook output).
_NOT_PROMPTS = ("<command-", "<local-command", "<system-reminder>", "Caveat: ")


def root(home: Path, env: Mapping[str, str]) -> Path:
    configured = env.get("CLAUDE_CONFIG_DIR")
    return Path(configured) if configured else home / ".claude"


def transcripts(home: Path, env: Mapping[str, str]) -> Iterator[Transcript | Unreadable]:
    projects = root(home, env) / "projects"
    if not projects.is_dir():
        return
    yield from read_each(AGENT, sorted(projects.glob("*/*.jsonl")), read)


def read(path: Path) -> Transcript:
    transcript = Transcript(AGENT, path.stem, str(path))
    log = TurnLog(transcript)
    skipped = [0]
    calls: dict[str, tuple[str, object]] = {}
    started = False
    for number, record in json_lines(path, skipped):
        if record.get("isSidechain") or record.get("type") not in ("user", "assistant"):
            continue
        at = iso_time(record.get("timestamp"))
        _identify(transcript, record)
        if not started:
            log.start(at)
            started = True
        message = record.get("message")
        if not isinstance(message, dict):
            continue
        if record["type"] == "assistant":
            _assistant(log, number, at, message.get("content"), calls)
        elif not record.get("isMeta"):
            _user(log, number, at, record, message.get("content"), calls)
    transcript.skipped = skipped[0]
    return log.finish()


def _identify(transcript: Transcript, record: Mapping[str, Any]) -> None:
    session = record.get("sessionId")
    if isinstance(session, str) and session and transcript.session_id != session:
        transcript.session_id = session
    cwd = record.get("cwd")
    if transcript.cwd is None and isinstance(cwd, str) and os.path.isabs(cwd):
        transcript.cwd = cwd


def _assistant(
    log: TurnLog, number: int, at: str | None, content: object, calls: dict[str, tuple[str, object]]
) -> None:
    blocks = content if isinstance(content, list) else [content]
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use":
            calls[str(block.get("id"))] = (str(block.get("name") or "tool"), block.get("input"))
    log.answer(str(number), at, text_of([b for b in blocks if _is_text(b)]))


def _user(
    log: TurnLog,
    number: int,
    at: str | None,
    record: Mapping[str, Any],
    content: object,
    calls: dict[str, tuple[str, object]],
) -> None:
    blocks = content if isinstance(content, list) else [content]
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in results:
        call_id = str(block.get("tool_use_id"))
        name, tool_input = calls.pop(call_id, ("tool", None))
        response = record.get("toolUseResult")
        if not isinstance(response, dict | str):
            response = block.get("content")
        failed = block.get("is_error") is True
        log.tool(f"{number}:{call_id}", at, name, tool_input, response, failed=failed)
    if results:
        return
    text = text_of([b for b in blocks if isinstance(b, str) or _is_text(b)])
    if not text.lstrip().startswith(_NOT_PROMPTS):
        log.prompt(str(number), at, text)


def _is_text(block: object) -> bool:
    return isinstance(block, dict) and block.get("type") == "text"
