"""Gemini CLI: chats under ``~/.gemini/tmp/<project>/chats/session-*.jsonl`` (or ``.json``).

A ``.jsonl`` chat starts with a header line (``sessionId``, ``startTime``), then
one line per message; a message written again (its tool calls done) repeats its
``id``, and a ``{"$set": {"messages": […]}}`` line replaces the list so far. An
older ``.json`` chat is one object holding ``messages``. The project folder's
``.project_root`` (or ``~/.gemini/projects.json``) names the directory it ran in.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ai_memory.importers.lines import iso_time, json_lines, listed, read_regular, text_of
from ai_memory.importers.model import Transcript, Unreadable
from ai_memory.importers.turns import TurnLog

AGENT = "gemini"
_INJECTED = ("<session_context>",)


def root(home: Path, env: Mapping[str, str]) -> Path:
    return home / ".gemini"


def transcripts(home: Path, env: Mapping[str, str]) -> Iterator[Transcript | Unreadable]:
    base = root(home, env)
    folders = base / "tmp"
    if not folders.is_dir():
        return
    known = _projects(base)
    for path in sorted(folders.glob("*/chats/session-*.json*")):
        if path.suffix not in (".json", ".jsonl"):
            continue
        try:
            yield read(path, _directory(path.parent.parent, known))
        except (OSError, ValueError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else str(exc)
            yield Unreadable(AGENT, str(path), reason or str(exc))


def read(path: Path, cwd: str | None = None) -> Transcript:
    transcript = Transcript(AGENT, path.stem.removeprefix("session-"), str(path), cwd=cwd)
    header, messages, skipped = _load(path)
    session = header.get("sessionId")
    if isinstance(session, str) and session:
        transcript.session_id = session
    log = TurnLog(transcript)
    log.start(iso_time(header.get("startTime")))
    for number, message in enumerate(messages, 1):
        _message(log, number, message)
    transcript.skipped = skipped
    return log.finish()


def _load(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The header and the messages, each at its last version, in first-seen order."""
    if path.suffix == ".json":
        chat = json.loads(read_regular(path))
        if not isinstance(chat, dict):
            raise ValueError("the chat file is not a JSON object")
        return chat, [m for m in listed(chat.get("messages")) if isinstance(m, dict)], 0
    skipped = [0]
    header: dict[str, Any] = {}
    messages: dict[str, dict[str, Any]] = {}
    for number, line in json_lines(path, skipped):
        update = line.get("$set")
        if isinstance(update, dict):
            if isinstance(update.get("messages"), list):
                messages = {str(m.get("id")): m for m in update["messages"] if isinstance(m, dict)}
        elif "type" in line and "id" in line:
            messages[str(line["id"])] = line
        elif not header and "sessionId" in line:
            header = line
        else:
            messages[f"line-{number}"] = line
    return header, list(messages.values()), skipped[0]


def _message(log: TurnLog, number: int, message: Mapping[str, Any]) -> None:
    at = iso_time(message.get("timestamp"))
    ident = str(message.get("id") or number)
    kind = message.get("type")
    if kind == "user":
        text = text_of(message.get("content"))
        if not text.lstrip().startswith(_INJECTED):
            log.prompt(ident, at, text)
    elif kind == "gemini":
        for call in listed(message.get("toolCalls")):
            if isinstance(call, dict):
                _tool(log, ident, at, call)
        log.answer(ident, at, text_of(message.get("content")))


def _tool(log: TurnLog, ident: str, at: str | None, call: Mapping[str, Any]) -> None:
    output: object = call.get("resultDisplay")
    for result in listed(call.get("result")):
        response = result.get("functionResponse") if isinstance(result, dict) else None
        if isinstance(response, dict) and isinstance(response.get("response"), dict):
            output = response["response"]
    name = str(call.get("name") or "tool")
    when = iso_time(call.get("timestamp")) or at
    failed = call.get("status") not in (None, "success")
    log.tool(f"{ident}:{call.get('id')}", when, name, call.get("args"), output, failed=failed)


def _projects(base: Path) -> dict[str, str]:
    """Project folder name (and path hash, used by older versions) -> directory."""
    try:
        data = json.loads((base / "projects.json").read_bytes())
    except (OSError, ValueError):
        return {}
    found: dict[str, str] = {}
    table = data.get("projects") if isinstance(data, dict) else None
    for directory, name in (table if isinstance(table, dict) else {}).items():
        if isinstance(directory, str) and isinstance(name, str):
            found[name] = directory
            found[hashlib.sha256(directory.encode()).hexdigest()] = directory
    return found


def _directory(folder: Path, known: Mapping[str, str]) -> str | None:
    try:
        recorded = (folder / ".project_root").read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        recorded = ""
    if recorded and os.path.isabs(recorded):
        return recorded
    return known.get(folder.name)
