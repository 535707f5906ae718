"""OpenCode: sessions in its SQLite database, ``~/.local/share/opencode/opencode.db``.

Tables ``session`` (id, directory, times), ``message`` (role, per session) and
``part`` (text, tool calls with their state) hold JSON in ``data``. Older versions
kept the same objects as files under ``storage/`` (``session/<project>/<id>.json``,
``message/<session>/<id>.json``, ``part/<message>/<id>.json``); both are read.
The database is opened read-only: OpenCode may be running.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import closing
from pathlib import Path
from typing import Any

from ai_memory.importers.lines import inner, iso_time, read_regular
from ai_memory.importers.model import Transcript, Unreadable
from ai_memory.importers.turns import TurnLog

AGENT = "opencode"
SESSIONS = """
SELECT id, directory, time_created FROM session WHERE parent_id IS NULL ORDER BY time_created, id
"""
MESSAGES = "SELECT id, data FROM message WHERE session_id = ? ORDER BY time_created, id"
PARTS = "SELECT message_id, data FROM part WHERE session_id = ? ORDER BY time_created, id"
Rows = list[tuple[str, dict[str, Any]]]


def root(home: Path, env: Mapping[str, str]) -> Path:
    data = env.get("XDG_DATA_HOME")
    return (Path(data) if data else home / ".local" / "share") / "opencode"


def transcripts(home: Path, env: Mapping[str, str]) -> Iterator[Transcript | Unreadable]:
    base = root(home, env)
    database = base / "opencode.db"
    if database.is_file():
        try:
            yield from _from_database(database)
        except sqlite3.Error as exc:
            yield Unreadable(AGENT, str(database), str(exc))
    if (base / "storage" / "session").is_dir():
        yield from _from_files(base / "storage")


def _from_database(path: Path) -> Iterator[Transcript]:
    uri = f"file:{path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
        for session_id, directory, created in conn.execute(SESSIONS).fetchall():
            messages = [(m, _json(d)) for m, d in conn.execute(MESSAGES, (session_id,))]
            parts = [(m, _json(d)) for m, d in conn.execute(PARTS, (session_id,))]
            source = f"{path}#{session_id}"
            yield build(str(session_id), directory, created, messages, parts, source)


def _from_files(storage: Path) -> Iterator[Transcript | Unreadable]:
    for path in sorted((storage / "session").glob("*/*.json")):
        try:
            info = _json(read_regular(path))
            session_id = str(info.get("id") or path.stem)
            if info.get("parentID"):
                continue
            messages = _folder(storage / "message" / session_id)
            parts: Rows = []
            for message_id, _ in messages:
                parts += _folder(storage / "part" / message_id)
            created = inner(info, "time", "created")
            yield build(session_id, info.get("directory"), created, messages, parts, str(path))
        except OSError as exc:
            yield Unreadable(AGENT, str(path), exc.strerror or str(exc))


def _folder(folder: Path) -> Rows:
    """The JSON objects of a folder, oldest first (their ids sort by creation)."""
    if not folder.is_dir():
        return []
    rows = [(file.stem, _json(read_regular(file))) for file in sorted(folder.glob("*.json"))]
    return [(str(data.get("messageID") or name), data) for name, data in rows]


def build(
    session_id: str,
    directory: object,
    created: object,
    messages: Rows,
    parts: Rows,
    source: str,
) -> Transcript:
    """The session from its messages and their parts (either storage gives these)."""
    cwd = directory if isinstance(directory, str) and directory.startswith("/") else None
    transcript = Transcript(AGENT, session_id, source, cwd=cwd)
    transcript.skipped = sum(1 for _, data in messages + parts if not data)
    by_message: dict[str, list[dict[str, Any]]] = {}
    for message_id, data in parts:
        by_message.setdefault(message_id, []).append(data)
    log = TurnLog(transcript)
    log.start(iso_time(created))
    for message_id, data in messages:
        at = iso_time(inner(data, "time", "created"))
        for number, part in enumerate(by_message.get(message_id, [])):
            _part(log, f"{message_id}:{number}", at, data.get("role"), part)
    return log.finish()


def _part(log: TurnLog, ident: str, at: str | None, role: object, part: Mapping[str, Any]) -> None:
    kind = part.get("type")
    if kind == "text" and not part.get("synthetic"):
        text = part.get("text")
        if isinstance(text, str):
            (log.prompt if role == "user" else log.answer)(ident, at, text)
    elif kind == "tool" and isinstance(part.get("state"), dict):
        state = part["state"]
        if state.get("status") not in ("completed", "error"):
            return
        when = iso_time(inner(state, "time", "end")) or at
        output = state.get("output") if state.get("status") == "completed" else state.get("error")
        failed = state.get("status") == "error" or _exit(state) not in (None, 0)
        name = str(part.get("tool") or "tool")
        log.tool(ident, when, name, state.get("input"), output, failed=failed)


def _exit(state: Mapping[str, Any]) -> object:
    meta = state.get("metadata")
    return meta.get("exit") if isinstance(meta, dict) else None


def _json(raw: str | bytes) -> dict[str, Any]:
    """A row's JSON object; a corrupt one is empty (and counted as skipped)."""
    try:
        value = json.loads(raw)
    except (ValueError, TypeError, RecursionError):
        return {}
    return value if isinstance(value, dict) else {}
