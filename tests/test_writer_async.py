"""Coroutines awaiting the writer: answered per batch, errors and cancellation intact."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from ai_memory.store.writer import Writer


def insert(value: str):  # type: ignore[no-untyped-def]
    def command(conn: sqlite3.Connection) -> int:
        cursor = conn.execute(
            "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', ?, '{}')",
            (value,),
        )
        return int(cursor.lastrowid or 0)

    return command


def refuse(conn: sqlite3.Connection) -> None:
    raise ValueError("refused")


def actions(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT action FROM audit_log ORDER BY id")]
    finally:
        conn.close()


def test_concurrent_coroutines_each_get_their_own_answer(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    gate = threading.Event()
    blocker = writer.submit(lambda conn: gate.wait(5))

    async def main() -> tuple[list[int], BaseException]:
        tasks = [asyncio.create_task(writer.run(insert(f"a{i}"))) for i in range(30)]
        bad = asyncio.create_task(writer.run(refuse))
        await asyncio.sleep(0.05)  # every command is queued behind the blocker
        gate.set()
        ids = await asyncio.gather(*tasks)
        with pytest.raises(ValueError, match="refused") as caught:
            await bad
        return ids, caught.value

    ids, error = asyncio.run(main())
    assert blocker.result(timeout=5) is True
    writer.stop()
    assert len(set(ids)) == 30
    assert isinstance(error, ValueError)
    assert actions(tmp_path / "m.sqlite") == [f"a{i}" for i in range(30)]
    assert writer.transactions < writer.commands  # they shared transactions


def test_a_coroutine_cancelled_before_its_turn_drops_its_command(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    gate, running = threading.Event(), threading.Event()

    def block(conn: sqlite3.Connection) -> bool:
        running.set()
        return gate.wait(5)

    blocker = writer.submit(block)
    assert running.wait(5)  # the blocker's batch has started: nothing else is in it

    async def main() -> int:
        doomed = asyncio.create_task(writer.run(insert("cancelled")))
        kept = asyncio.create_task(writer.run(insert("kept")))
        await asyncio.sleep(0.05)
        doomed.cancel()
        with pytest.raises(asyncio.CancelledError):
            await doomed
        gate.set()
        return await kept

    assert asyncio.run(main()) > 0
    blocker.result(timeout=5)
    assert writer.call(insert("after")) > 0
    writer.stop()
    assert actions(tmp_path / "m.sqlite") == ["kept", "after"]
