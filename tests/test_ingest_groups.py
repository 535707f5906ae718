"""Single hook events of concurrent requests share writer commands, each answered alone."""

from __future__ import annotations

import asyncio
import sqlite3
import threading

import pytest

from ai_memory.core.principal import Principal
from ai_memory.hooks.ingest import HookEvent, IngestOutcome, parse_event
from ai_memory.hooks.ingest_groups import IngestGroups
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.runtime import Runtime

SANITIZER = Sanitizer()
# Fails the insert of any observation of session "bad" (a real constraint on the real store).
FAIL_BAD = """
CREATE TEMP TRIGGER fail_bad BEFORE INSERT ON main.observations
WHEN NEW.session_id = 'bad' BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END
"""


def event(session: str, key: str, kind: str = "UserPromptSubmit") -> HookEvent:
    params = {"project": "groups", "agent": "claude-code", "event": kind, "session_id": session}
    return parse_event({**params, "ingest_key": key}, {"prompt": f"prompt {key}"}, SANITIZER)


def stored(runtime: Runtime) -> list[str]:
    rows = runtime.readers.read(
        lambda conn: conn.execute(
            "SELECT ingest_key FROM observations WHERE project = 'groups' ORDER BY id"
        ).fetchall()
    )
    return [row[0] for row in rows]


async def store_while_blocked(
    runtime: Runtime, groups: IngestGroups, events: list[HookEvent]
) -> list[list[IngestOutcome] | BaseException]:
    """Store each event from its own task while the writer is held: the first ones go at
    once (and wait in the writer's queue), the rest wait for them and go as groups."""
    gate = threading.Event()
    blocker = runtime.writer.submit(lambda conn: gate.wait(10))
    tasks = [asyncio.create_task(groups.store([e], Principal.root())) for e in events]
    await asyncio.sleep(0.05)  # every task has reached its wait
    gate.set()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert blocker.result() is True
    return results


def test_events_arriving_while_the_writer_is_busy_share_one_command(runtime: Runtime) -> None:
    groups = IngestGroups(runtime.writer)
    events = [event(f"s{i % 3}", f"k{i}") for i in range(12)]
    results = asyncio.run(store_while_blocked(runtime, groups, events))
    assert all(r == [IngestOutcome(stored=True, ended=False)] for r in results)
    assert groups.commands == 3  # two went alone; the ten that waited went together
    assert groups.events == 12
    assert sorted(stored(runtime)) == sorted(f"k{i}" for i in range(12))


def test_a_repeated_ingest_key_in_one_group_is_a_duplicate(runtime: Runtime) -> None:
    groups = IngestGroups(runtime.writer)
    events = [event("s", "first"), event("s", "second"), event("s", "dup"), event("s", "dup")]
    results = asyncio.run(store_while_blocked(runtime, groups, events))
    assert results[2] == [IngestOutcome(stored=True, ended=False)]
    assert results[3] == [IngestOutcome(stored=False, ended=False)]  # answered duplicate:true
    assert stored(runtime).count("dup") == 1


def test_an_event_failing_its_group_fails_alone(runtime: Runtime) -> None:
    runtime.writer.call(lambda conn: conn.execute(FAIL_BAD))
    groups = IngestGroups(runtime.writer)
    events = [event("a", "a0"), event("a", "a1"), event("a", "a2"), event("bad", "b0")]
    events += [event("a", f"a{i}") for i in range(3, 6)]
    results = asyncio.run(store_while_blocked(runtime, groups, events))
    failed = results[3]
    assert isinstance(failed, sqlite3.IntegrityError)
    assert "refused by the test trigger" in str(failed)
    others = [r for i, r in enumerate(results) if i != 3]
    assert all(r == [IngestOutcome(stored=True, ended=False)] for r in others)
    assert sorted(stored(runtime)) == [f"a{i}" for i in range(6)]


def test_a_session_end_never_waits_in_a_group(runtime: Runtime) -> None:
    groups = IngestGroups(runtime.writer)
    events = [event("e", "p0"), event("e", "p1"), event("e", "p2"), event("e", "end", "SessionEnd")]
    results = asyncio.run(store_while_blocked(runtime, groups, events))
    assert results[3] == [IngestOutcome(stored=True, ended=True)]
    assert groups.commands == 4  # p0, p1 and the end each alone; p2 waited, then went alone


@pytest.mark.parametrize("running", [1, 2])
def test_nothing_waits_when_the_writer_is_free(runtime: Runtime, running: int) -> None:
    groups = IngestGroups(runtime.writer, max_running=running)

    async def one_at_a_time() -> None:
        for i in range(5):
            assert await groups.store([event("free", f"f{i}")], None) == [
                IngestOutcome(stored=True, ended=False)
            ]

    asyncio.run(one_at_a_time())
    assert groups.commands == 5
    assert len(stored(runtime)) == 5


def test_a_lone_request_is_stored_in_place_when_the_writer_is_idle(runtime: Runtime) -> None:
    groups = IngestGroups(runtime.writer)
    before = runtime.writer.transactions

    async def alone() -> list[IngestOutcome]:
        return await groups.store([event("lone", "l0")], None, lone_request=True)

    assert asyncio.run(alone()) == [IngestOutcome(stored=True, ended=False)]
    assert stored(runtime)[-1:] == ["l0"]
    assert groups.commands == 1 and runtime.writer.transactions == before + 1


def test_a_lone_request_waits_its_turn_while_the_writer_is_busy(runtime: Runtime) -> None:
    groups = IngestGroups(runtime.writer)
    gate = threading.Event()

    async def behind_a_busy_writer() -> list[IngestOutcome]:
        blocker = runtime.writer.submit(lambda conn: gate.wait(10))
        task = asyncio.create_task(groups.store([event("lone", "l1")], None, lone_request=True))
        await asyncio.sleep(0.05)
        assert not task.done()  # queued behind the running command, not run beside it
        gate.set()
        outcome = await task
        assert blocker.result() is True
        return outcome

    assert asyncio.run(behind_a_busy_writer()) == [IngestOutcome(stored=True, ended=False)]
    assert "l1" in stored(runtime)


def test_a_long_event_of_a_lone_request_is_stored_by_the_writer_thread(runtime: Runtime) -> None:
    # Which thread inserted each row, told by a trigger on the writer's own connection.
    def watch(conn: sqlite3.Connection) -> None:
        conn.create_function("thread_name", 0, lambda: threading.current_thread().name)
        conn.execute("CREATE TEMP TABLE inserted_by (key TEXT, thread TEXT)")
        conn.execute(
            "CREATE TEMP TRIGGER note_thread AFTER INSERT ON main.observations BEGIN "
            "INSERT INTO inserted_by VALUES (NEW.ingest_key, thread_name()); END"
        )

    runtime.writer.call(watch)
    groups = IngestGroups(runtime.writer)
    params = {"project": "groups", "agent": "claude-code", "event": "UserPromptSubmit"}
    long = parse_event(
        {**params, "session_id": "lone", "ingest_key": "long"}, {"prompt": "w " * 2000}, SANITIZER
    )

    async def alone() -> None:
        await groups.store([event("lone", "short")], None, lone_request=True)
        await groups.store([long], None, lone_request=True)

    asyncio.run(alone())
    threads = dict(runtime.writer.call(lambda c: c.execute("SELECT * FROM inserted_by").fetchall()))
    assert threads["short"] == threading.current_thread().name  # stored in place
    assert threads["long"] == "ai-memory-writer"
