"""Migration 17: the session and observation indexes a hook event no longer rewrites.

Real SQLite files through the real writer connection, the real migrations and the
real ingest command.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ai_memory.hooks.ingest import parse_event, store_command
from ai_memory.hooks.ingest_access import SESSION_ROWS
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.hooks.sessions import IDLE_SESSIONS
from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import MIGRATIONS, SCHEMA_VERSION, _statements, migrate
from ai_memory.store.sweep import OLD_OBSERVATIONS, PRUNABLE_SESSIONS

NOW = "2026-11-30T10:00:00.000000Z"
SANITIZER = Sanitizer()


def at_schema(path: Path, version: int) -> sqlite3.Connection:
    conn = connect_writer(path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    for number, script in enumerate(MIGRATIONS[:version], start=1):
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (number, NOW))
    return conn


def columns(conn: sqlite3.Connection, index: str) -> list[str]:
    return [row[2] for row in conn.execute(f"PRAGMA index_info({index})")]


def plan(conn: sqlite3.Connection, sql: str, params: object) -> str:
    return " | ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params))


def session(conn: sqlite3.Connection, session_id: str) -> tuple[object, ...]:
    row = conn.execute(
        "SELECT started_at, last_event_at, ended_at, end_reason, cwd, page_id FROM sessions "
        "WHERE session_id = ?",
        (session_id,),
    ).fetchone()
    return tuple(row)


def test_a_database_at_16_keeps_its_rows_and_takes_the_new_indexes(tmp_path: Path) -> None:
    conn = at_schema(tmp_path / "memory.sqlite", 16)
    conn.execute("INSERT INTO workspaces VALUES ('default', ?)", (NOW,))
    conn.execute(
        "INSERT INTO projects (workspace, name, created_at) VALUES ('default', 'shop', ?)", (NOW,)
    )
    conn.execute(
        "INSERT INTO sessions (workspace, project, session_id, agent, started_at, last_event_at)"
        " VALUES ('default', 'shop', 'old-1', 'codex', ?, ?)",
        (NOW, NOW),
    )
    conn.execute(
        "INSERT INTO observations (workspace, project, session_id, agent, kind, ingest_key, body,"
        " created_at) VALUES ('default', 'shop', 'old-1', 'codex', 'user-prompt', 'k-1',"
        " 'migrate the cart table', ?)",
        (NOW,),
    )
    assert migrate(conn) == SCHEMA_VERSION >= 17
    assert columns(conn, "sessions_by_id") == ["session_id", "started_at"]
    assert columns(conn, "sessions_open") == ["ended_at"]
    assert columns(conn, "observations_session") == [
        "workspace",
        "project",
        "session_id",
        "id",
        "created_at",
    ]
    names = {row[0] for row in conn.execute("SELECT name FROM sqlite_schema WHERE type='index'")}
    assert "observations_age" not in names
    assert session(conn, "old-1")[:2] == (NOW, NOW)
    body = conn.execute("SELECT body FROM observations WHERE ingest_key = 'k-1'").fetchone()[0]
    assert body == "migrate the cart table"
    conn.close()


def test_the_queries_over_the_changed_indexes_still_use_them(tmp_path: Path) -> None:
    conn = at_schema(tmp_path / "memory.sqlite", SCHEMA_VERSION)
    ownership = plan(conn, SESSION_ROWS, ("s-1",))
    assert "sessions_by_id" in ownership and "TEMP B-TREE" not in ownership, ownership
    idle = plan(conn, IDLE_SESSIONS, (NOW, 10))
    assert "USING INDEX sessions_open" in idle, idle
    old = plan(conn, OLD_OBSERVATIONS, ("default", "shop", "s-1", NOW, 10))
    assert "COVERING INDEX observations_session" in old, old
    prunable = plan(conn, PRUNABLE_SESSIONS, {"cutoff": NOW, "workspace": None, "project": None})
    assert "COVERING INDEX observations_session" in prunable, prunable
    conn.close()


def test_events_move_an_open_session_reopen_an_ended_one_and_end_it(tmp_path: Path) -> None:
    conn = at_schema(tmp_path / "memory.sqlite", SCHEMA_VERSION)
    times = iter(f"2026-11-30T10:00:0{i}.000000Z" for i in range(10))

    def at(session_id: str, event: str, body: dict[str, object]) -> None:
        params = {"project": "shop", "agent": "codex", "event": event, "session_id": session_id}
        stamp = next(times)
        command = store_command([parse_event(params, body, SANITIZER)], clock=lambda: stamp)
        conn.execute("BEGIN IMMEDIATE")
        command(conn)
        conn.execute("COMMIT")

    at("s-1", "UserPromptSubmit", {"prompt": "first", "cwd": "/work/shop"})
    first = "2026-11-30T10:00:00.000000Z"
    assert session(conn, "s-1") == (first, first, None, None, "/work/shop", None)
    at("s-1", "UserPromptSubmit", {"prompt": "second", "cwd": "/elsewhere"})
    second = "2026-11-30T10:00:01.000000Z"
    assert session(conn, "s-1") == (first, second, None, None, "/work/shop", None)
    at("s-1", "SessionEnd", {"reason": "exit"})
    third = "2026-11-30T10:00:02.000000Z"
    assert session(conn, "s-1") == (first, third, third, "exit", "/work/shop", None)
    conn.execute("UPDATE sessions SET page_id = 7 WHERE session_id = 's-1'")
    at("s-1", "UserPromptSubmit", {"prompt": "back again"})
    fourth = "2026-11-30T10:00:03.000000Z"
    assert session(conn, "s-1") == (first, fourth, None, None, "/work/shop", 7)
    count = conn.execute("SELECT count(*) FROM observations WHERE session_id = 's-1'").fetchone()
    assert count[0] == 4
    conn.close()
