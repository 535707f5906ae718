"""What the session finisher does with the wishes queued for one session: the most
wanted wins, and a page rewrite or a retry never ends a session a second time.

Each step is driven explicitly against a real data dir, as in test_idle_end_race.py.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from ai_memory.hooks.followup import LATE_EVENTS, UNWRITTEN, SessionFinisher
from ai_memory.hooks.ingest import parse_event, store_command
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.hooks.session_page import read_digest
from ai_memory.hooks.sessions import SessionKey, end_command, end_session
from ai_memory.runtime import Runtime

PARAMS = {"project": "shop", "agent": "claude-code", "session_id": "s1"}
KEY = SessionKey("default", "shop", "s1")


def ingest(runtime: Runtime, event: str, body: dict[str, Any]) -> None:
    hook = parse_event({**PARAMS, "event": event}, body, Sanitizer())
    runtime.writer.call(store_command([hook]))


def worked_and_ended(runtime: Runtime, prompt: str = "fix the cart total") -> None:
    ingest(runtime, "UserPromptSubmit", {"prompt": prompt})
    ingest(runtime, "SessionEnd", {"reason": "logout"})


def state(runtime: Runtime) -> tuple[Any, ...]:
    """(ended, page versions, handoffs)"""

    def read(conn: sqlite3.Connection) -> tuple[Any, ...]:
        [ended] = conn.execute("SELECT ended_at IS NOT NULL FROM sessions").fetchone()
        versions = conn.execute(
            "SELECT count(*) FROM pages WHERE path = 'sessions/s1.md'"
        ).fetchone()[0]
        handoffs = conn.execute("SELECT count(*) FROM handoffs").fetchone()[0]
        return bool(ended), versions, handoffs

    return runtime.readers.read(read)


def finish(runtime: Runtime, *wishes: str) -> None:
    """Queue ``wishes`` for the session before the finisher runs, then let it run."""

    async def run() -> int:
        finisher = SessionFinisher(runtime.wiki)
        for reason in wishes:
            finisher.enqueue(KEY, reason)
        finisher.start()
        left = await finisher.flush(timeout=30)
        await finisher.stop()
        return left

    assert asyncio.run(run()) == 0


def ended_then_told_of_late_work(runtime: Runtime) -> None:
    """The session ended with its page and handoff, then a prompt from before its end came
    late (retried from a spool): its page is due again, and nothing else."""
    worked_and_ended(runtime)
    assert end_session(runtime.wiki, KEY) is not None
    late = parse_event(
        {**PARAMS, "event": "UserPromptSubmit", "queued_s": "60"},
        {"prompt": "the prompt that waited in the spool"},
        Sanitizer(),
    )
    [outcome] = runtime.writer.call(store_command([late]))
    assert outcome.rewrite
    assert state(runtime) == (True, 1, 1)


def test_a_real_end_queued_after_a_page_rewrite_is_what_runs(runtime: Runtime) -> None:
    ended_then_told_of_late_work(runtime)
    finish(runtime, LATE_EVENTS, "session-end")
    assert state(runtime) == (True, 2, 2)  # the page again, and a handoff


def test_a_page_rewrite_queued_after_a_real_end_does_not_take_its_place(
    runtime: Runtime,
) -> None:
    ended_then_told_of_late_work(runtime)
    finish(runtime, "session-end", LATE_EVENTS, UNWRITTEN)
    assert state(runtime) == (True, 2, 2)


def test_a_page_rewrite_only_writes_the_page(runtime: Runtime) -> None:
    ended_then_told_of_late_work(runtime)
    finish(runtime, UNWRITTEN, LATE_EVENTS)
    assert state(runtime) == (True, 2, 1)  # no handoff: the first one stands


def test_a_session_ended_again_after_more_work_gets_its_handoff_from_a_rewrite(
    runtime: Runtime,
) -> None:
    worked_and_ended(runtime)
    assert end_session(runtime.wiki, KEY) is not None
    worked_and_ended(runtime, "and now the tax")  # its new end has no page yet
    finish(runtime, LATE_EVENTS)
    assert state(runtime) == (True, 2, 2)


def test_a_rewrite_of_a_page_never_written_is_the_sessions_end(runtime: Runtime) -> None:
    worked_and_ended(runtime)
    finish(runtime, LATE_EVENTS)
    assert state(runtime) == (True, 1, 1)


def test_a_rewrite_for_a_session_reopened_since_does_nothing(runtime: Runtime) -> None:
    worked_and_ended(runtime)
    assert end_session(runtime.wiki, KEY) is not None
    digest = runtime.readers.read(lambda conn: read_digest(conn, KEY.scope, "s1", 50))
    assert digest is not None and digest.ended_at is not None
    ingest(runtime, "UserPromptSubmit", {"prompt": "one more thing"})  # reopens it
    # Built while the session was ended, committed after it was reopened.
    command = end_command(runtime.wiki, KEY, digest, LATE_EVENTS, check=False, page_only=True)
    assert runtime.writer.call(command).page_id is None
    assert end_session(runtime.wiki, KEY, reason=LATE_EVENTS, page_only=True) is None
    assert state(runtime) == (False, 1, 1)


def test_the_retry_of_an_unwritten_page_does_nothing_once_an_end_wrote_it(
    runtime: Runtime,
) -> None:
    worked_and_ended(runtime)
    digest = runtime.readers.read(lambda conn: read_digest(conn, KEY.scope, "s1", 50))
    assert digest is not None
    # The scheduler's retry, decided while the page was missing; the end writes it first.
    retry = end_command(runtime.wiki, KEY, digest, UNWRITTEN, check=False, if_unwritten=True)
    assert end_session(runtime.wiki, KEY) is not None
    assert runtime.writer.call(retry).page_id is None
    assert state(runtime) == (True, 1, 1)
