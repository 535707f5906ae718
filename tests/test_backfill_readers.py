"""The transcript readers: hostile shapes never raise, and OpenCode's older file storage reads
the same sessions as its database."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from ai_memory.importers import claude_code, codex, discover, gemini, opencode
from ai_memory.importers.lines import MAX_LINE_BYTES, iso_time
from ai_memory.importers.model import Transcript, Unreadable
from tests.backfill_homes import FIXTURES

ODD: list[Any] = [None, 1, "x", [], {}, [1, None, "s", {}], {"type": "tool_result"}, True, 1.5,
                  {"type": "text", "text": 5}, {"type": "tool_use", "id": None, "name": 3},
                  {"a": {"b": []}}]  # fmt: skip


def odd(rng: random.Random) -> Any:
    return rng.choice(ODD)


def claude_line(rng: random.Random) -> dict[str, Any]:
    line = {key: odd(rng) for key in ("timestamp", "sessionId", "cwd", "isMeta", "toolUseResult")}
    line["type"] = rng.choice(["user", "assistant", odd(rng)])
    line["message"] = rng.choice([odd(rng), {"content": odd(rng), "role": odd(rng)}])
    return line


def codex_line(rng: random.Random) -> dict[str, Any]:
    kinds = ["message", "function_call", "function_call_output", "task_complete", odd(rng)]
    payload = {key: odd(rng) for key in ("content", "call_id", "output", "id", "cwd", "input")}
    payload.update(type=rng.choice(kinds), role=rng.choice(["user", "assistant", odd(rng)]))
    payload["arguments"] = rng.choice(['{"cmd": 1}', '{"command": [1, null]}', "[1]", odd(rng)])
    kind = rng.choice(["session_meta", "response_item", "event_msg", odd(rng)])
    return {"type": kind, "timestamp": odd(rng), "payload": rng.choice([payload, odd(rng)])}


def gemini_line(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.1:
        return {"$set": {"messages": [odd(rng), {"id": odd(rng), "type": "user"}]}}
    call = {"name": odd(rng), "args": odd(rng), "status": odd(rng), "timestamp": odd(rng),
            "result": [odd(rng), {"functionResponse": odd(rng)}]}  # fmt: skip
    line = {key: odd(rng) for key in ("id", "content", "timestamp")}
    line["type"] = rng.choice(["user", "gemini", odd(rng)])
    line["toolCalls"] = rng.choice([odd(rng), [odd(rng), call]])
    return line


def test_hostile_shapes_are_skipped_never_raised(tmp_path: Path) -> None:
    rng = random.Random(7)
    readers = [(claude_code.read, claude_line, "c.jsonl"), (codex.read, codex_line, "r.jsonl"),
               (gemini.read, gemini_line, "session-g.jsonl")]  # fmt: skip
    for _ in range(60):
        for read, make, name in readers:
            path = tmp_path / name
            lines = [json.dumps(make(rng)) for _ in range(15)] + ['{"cut', "[1, 2]"]
            path.write_text("\n".join(lines))
            found = read(path)
            assert isinstance(found, Transcript) and found.skipped >= 2
        state = rng.choice([odd(rng), {"status": "completed", "time": odd(rng), "metadata": 1}])
        parts = [(str(rng.randrange(3)), {"type": rng.choice(["text", "tool"]), "text": odd(rng),
                                          "state": state}) for _ in range(8)]  # fmt: skip
        messages = [(str(n), {"role": odd(rng), "time": odd(rng)}) for n in range(3)]
        opencode.build("s", odd(rng), odd(rng), messages, parts, "db")


def as_files(database: Path, storage: Path) -> None:
    """OpenCode's older layout, written from the rows of the database it keeps now."""
    with closing(sqlite3.connect(database)) as conn:
        for sid, directory, created in conn.execute(
            "SELECT id, directory, time_created FROM session"
        ):
            info = {"id": sid, "directory": directory, "time": {"created": created}}
            write(storage / "session" / "global" / f"{sid}.json", info)
        for mid, sid, data in conn.execute("SELECT id, session_id, data FROM message"):
            write(storage / "message" / sid / f"{mid}.json", {**json.loads(data), "id": mid})
        for pid, mid, data in conn.execute("SELECT id, message_id, data FROM part"):
            write(storage / "part" / mid / f"{pid}.json", {**json.loads(data), "messageID": mid})


def write(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_opencode_file_storage_reads_as_its_database(tmp_path: Path) -> None:
    database = FIXTURES / "opencode" / ".local" / "share" / "opencode" / "opencode.db"

    def ordered(found: list[Any]) -> list[Transcript]:
        return sorted(found, key=lambda t: str(t.session_id))

    from_db = ordered(list(opencode.transcripts(FIXTURES / "opencode", {})))
    as_files(database, tmp_path / "opencode" / "storage")
    env = {"XDG_DATA_HOME": str(tmp_path)}
    from_files = ordered(list(opencode.transcripts(tmp_path / "home", env)))
    assert len(from_db) == len(from_files) == 2

    def shape(found: list[Any]) -> list[list[tuple[str, str | None, object]]]:
        return [[(e.kind, e.at, e.payload) for e in t.entries] for t in found]

    assert shape(from_files) == shape(from_db)
    assert (
        [t.cwd for t in from_files]
        == [t.cwd for t in from_db]
        == ["/tmp/bf/opencode/acme-shop"] * 2
    )


@pytest.mark.timeout(60)
def test_a_pipe_a_device_or_an_endless_line_is_unreadable_or_skipped(tmp_path: Path) -> None:
    """A transcript that is a FIFO or a device (a symlink to ``/dev/zero``) is reported, never
    waited on or read without end; a line too long to parse is skipped, its neighbours kept."""
    home = tmp_path / "home"
    claude = home / ".claude" / "projects" / "-src"
    claude.mkdir(parents=True)
    os.mkfifo(claude / "pipe.jsonl")
    (claude / "zero.jsonl").symlink_to("/dev/zero")
    prompt = {"type": "user", "cwd": "/src", "message": {"content": "kept prompt"}}
    long_line = b'{"x": "' + b"a" * (MAX_LINE_BYTES + 10)
    (claude / "long.jsonl").write_bytes(long_line + b'"}\n' + json.dumps(prompt).encode() + b"\n")
    gemini_chats = home / ".gemini" / "tmp" / "abc" / "chats"
    gemini_chats.mkdir(parents=True)
    os.mkfifo(gemini_chats / "session-1.json")
    found = {Path(t.source).name: t for t in discover.find(home, {}, discover.agent_names([]))}
    for name in ("pipe.jsonl", "zero.jsonl", "session-1.json"):
        assert isinstance(found[name], Unreadable), name
        assert "not a regular file" in found[name].reason
    long = found["long.jsonl"]
    assert isinstance(long, Transcript) and long.skipped == 1
    assert [e.payload.get("prompt") for e in long.entries if e.kind == "user-prompt"] == [
        "kept prompt"
    ]


def test_times_in_every_format_sort_as_they_happened() -> None:
    """``--since 0999-01-01`` and a transcript's far-past clock sort before 2000, not after."""
    given = ["0999-01-01", "0001-01-01T00:00:00Z", 1700000000, 1700000000000,
             "2026-11-01T10:00:00.123456789Z", "2026-11-01T12:00+01:00", "9999-12-31"]  # fmt: skip
    found = [iso_time(value) for value in given]
    assert all(value is not None and len(value) == 27 for value in found), found
    assert found[1] <= found[0] < found[2] == found[3] < found[4] < found[5] < found[6]  # type: ignore[operator]
    assert [iso_time(v) for v in ("yesterday", "1700000000", True, float("nan"))] == [None] * 4
    # At the ends of the calendar a time zone shift must not raise (it cost the whole import).
    assert iso_time("0001-01-01T00:00:00+01:00") == found[1]
    assert iso_time("9999-12-31T23:59:59-01:00") == "9999-12-31T23:59:59.999999Z"
