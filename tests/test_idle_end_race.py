"""An idle end is a compare-and-set: a real SessionEnd that arrives in between wins.

Each step is driven explicitly against a real data dir: the idle end decides, a real
SessionEnd is stored through the ingest command, then the idle end tries to commit.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

import pytest

from ai_memory.hooks.followup import SessionFinisher
from ai_memory.hooks.ingest import parse_event, store_command
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.hooks.session_page import read_digest
from ai_memory.hooks.sessions import (
    IdleEndRefused,
    SessionKey,
    end_command,
    end_session,
    idle_sessions,
)
from ai_memory.runtime import Runtime

PARAMS = {"project": "shop", "agent": "claude-code", "session_id": "s1"}
KEY = SessionKey("default", "shop", "s1")
LATER = "9999-01-01T00:00:00Z"  # every open session is idle before this


def ingest(runtime: Runtime, event: str, body: dict[str, Any]) -> None:
    hook = parse_event({**PARAMS, "event": event}, body, Sanitizer())
    runtime.writer.call(store_command([hook]))


def work(runtime: Runtime) -> None:
    ingest(runtime, "UserPromptSubmit", {"prompt": "fix the cart total"})
    ingest(runtime, "Stop", {"last_assistant_message": "Fixed the rounding."})


def real_end(runtime: Runtime) -> None:
    ingest(runtime, "SessionEnd", {"reason": "logout"})


def state(runtime: Runtime) -> tuple[Any, ...]:
    def read(conn: sqlite3.Connection) -> tuple[Any, ...]:
        ended = conn.execute(
            "SELECT end_reason, page_id FROM sessions WHERE session_id = 's1'"
        ).fetchone()
        handoffs = conn.execute("SELECT count(*) FROM handoffs").fetchone()[0]
        versions = conn.execute(
            "SELECT count(*) FROM pages WHERE path = 'sessions/s1.md'"
        ).fetchone()[0]
        return ended[0], ended[1] is not None, handoffs, versions

    return runtime.readers.read(read)


def test_a_real_end_between_the_idle_decision_and_its_commit_wins(runtime: Runtime) -> None:
    work(runtime)
    [idle] = runtime.readers.read(lambda conn: idle_sessions(conn, LATER))
    assert idle.key == KEY
    digest = runtime.readers.read(lambda conn: read_digest(conn, KEY.scope, "s1", 50))
    assert digest is not None
    command = end_command(runtime.wiki, KEY, digest, "idle", expect=idle.last_observation_id)

    real_end(runtime)  # the late real SessionEnd lands before the idle end commits
    with pytest.raises(IdleEndRefused):
        runtime.writer.call(command)
    assert state(runtime) == ("logout", False, 0, 0)  # the refused idle end left nothing

    result = end_session(runtime.wiki, KEY)  # the real end's own follow-up
    assert result is not None and result.handoff_id is not None
    assert state(runtime) == ("logout", True, 1, 1)  # one page, one handoff, its reason


def test_an_idle_end_that_finds_the_session_moved_on_does_nothing(runtime: Runtime) -> None:
    work(runtime)
    [idle] = runtime.readers.read(lambda conn: idle_sessions(conn, LATER))
    real_end(runtime)
    expect = idle.last_observation_id
    assert end_session(runtime.wiki, KEY, reason="idle", expect=expect) is None
    assert state(runtime) == ("logout", False, 0, 0)
    assert end_session(runtime.wiki, KEY) is not None
    assert state(runtime) == ("logout", True, 1, 1)


def test_an_idle_end_still_ends_a_session_left_as_it_was_found(runtime: Runtime) -> None:
    work(runtime)
    [idle] = runtime.readers.read(lambda conn: idle_sessions(conn, LATER))
    result = end_session(runtime.wiki, KEY, reason="idle", expect=idle.last_observation_id)
    assert result is not None and result.page_id is not None
    assert state(runtime) == ("idle", True, 1, 1)
    assert runtime.readers.read(lambda conn: idle_sessions(conn, LATER)) == []


def test_a_real_end_queued_behind_a_waiting_idle_end_takes_its_place(runtime: Runtime) -> None:
    work(runtime)
    [idle] = runtime.readers.read(lambda conn: idle_sessions(conn, LATER))
    real_end(runtime)

    async def finish() -> int:
        finisher = SessionFinisher(runtime.wiki)
        finisher.enqueue(KEY, "idle", expect=idle.last_observation_id)  # decided, waiting
        finisher.enqueue(KEY)  # the real end's follow-up, queued before the idle end ran
        finisher.start()
        left = await finisher.flush(timeout=30)
        await finisher.stop()
        return left

    assert asyncio.run(finish()) == 0
    assert state(runtime) == ("logout", True, 1, 1)
