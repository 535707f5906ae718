"""Rerunnable commands share one savepoint; a failing one still fails alone."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from ai_memory.core.errors import Conflict
from ai_memory.store.commands import Rerunnable
from ai_memory.store.writer import Writer


def actions(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT action FROM audit_log ORDER BY id")]
    finally:
        conn.close()


def staging(writer: Writer, target: Path, name: str, runs: list[str]) -> Rerunnable[int]:
    """Stage ``target`` and insert ``name``; ``runs`` counts how often it ran."""

    def command(conn: sqlite3.Connection) -> int:
        runs.append(name)
        writer.files.write(target, name.encode())
        cursor = conn.execute(
            "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', ?, '{}')",
            (name,),
        )
        return int(cursor.lastrowid or 0)

    return Rerunnable(command)


def failing(name: str, runs: list[str]) -> Rerunnable[None]:
    def command(conn: sqlite3.Connection) -> None:
        runs.append(name)
        conn.execute(
            "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', ?, '{}')",
            (name,),
        )
        raise ValueError(f"{name} refused")

    return Rerunnable(command)


def held(writer: Writer) -> threading.Event:
    """Hold the writer on a command until the returned event is set, so the commands
    submitted meanwhile share one batch."""
    gate = threading.Event()
    writer.submit(lambda conn: gate.wait(5))
    return gate


def test_rerunnable_commands_share_a_transaction_and_run_once(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    runs: list[str] = []
    gate = held(writer)
    futures = [
        writer.submit(staging(writer, tmp_path / "wiki" / f"p{i}.md", f"p{i}", runs))
        for i in range(20)
    ]
    gate.set()
    ids = [future.result(timeout=10) for future in futures]
    writer.stop()
    assert len(set(ids)) == 20
    assert runs == [f"p{i}" for i in range(20)]  # nothing ran twice
    assert actions(tmp_path / "m.sqlite") == [f"p{i}" for i in range(20)]
    assert (tmp_path / "wiki" / "p7.md").read_bytes() == b"p7"  # folder made on the pool
    assert not [p for p in (tmp_path / "wiki").iterdir() if p.name.startswith(".tmp-")]


def test_a_failing_rerunnable_command_fails_alone(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    runs: list[str] = []
    gate = held(writer)
    before = writer.submit(staging(writer, tmp_path / "a.md", "a", runs))
    bad = writer.submit(failing("bad", runs))
    after = writer.submit(staging(writer, tmp_path / "b.md", "b", runs))
    gate.set()
    assert before.result(timeout=10) > 0
    assert after.result(timeout=10) > 0
    with pytest.raises(ValueError, match="bad refused"):
        bad.result(timeout=10)
    writer.stop()
    assert actions(tmp_path / "m.sqlite") == ["a", "b"]  # the failing insert was undone
    assert (tmp_path / "a.md").read_bytes() == b"a"
    assert (tmp_path / "b.md").read_bytes() == b"b"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".tmp-")]


def test_a_file_that_cannot_be_created_fails_only_its_own_command(tmp_path: Path) -> None:
    """The temp file is created on a pool thread in a shared run: a folder path that is a
    file shows only there, and the run is redone so only that command fails."""
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    (tmp_path / "wiki").mkdir()
    (tmp_path / "wiki" / "plain").write_bytes(b"a file, not a folder")
    runs: list[str] = []
    gate = held(writer)
    good = writer.submit(staging(writer, tmp_path / "wiki" / "good.md", "good", runs))
    bad = writer.submit(staging(writer, tmp_path / "wiki" / "plain" / "x.md", "bad", runs))
    also = writer.submit(staging(writer, tmp_path / "wiki" / "also.md", "also", runs))
    gate.set()
    assert good.result(timeout=10) > 0
    assert also.result(timeout=10) > 0
    with pytest.raises(Conflict, match="folder path is a file"):
        bad.result(timeout=10)
    writer.stop()
    assert actions(tmp_path / "m.sqlite") == ["good", "also"]
    assert (tmp_path / "wiki" / "good.md").read_bytes() == b"good"
    assert (tmp_path / "wiki" / "plain").read_bytes() == b"a file, not a folder"
    assert not [p for p in (tmp_path / "wiki").iterdir() if p.name.startswith(".tmp-")]


def test_a_lone_rerunnable_command_that_fails_runs_once(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    runs: list[str] = []
    with pytest.raises(ValueError, match="alone refused"):
        writer.call(failing("alone", runs))
    assert writer.call(staging(writer, tmp_path / "next.md", "next", runs)) > 0
    writer.stop()
    assert runs == ["alone", "next"]
    assert actions(tmp_path / "m.sqlite") == ["next"]


def test_plain_commands_between_shared_runs_keep_their_order(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "m.sqlite")
    writer.start()
    runs: list[str] = []

    def plain(name: str):  # type: ignore[no-untyped-def]
        def command(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', ?, '{}')",
                (name,),
            )

        return command

    gate = held(writer)
    futures = [
        writer.submit(staging(writer, tmp_path / "r1.md", "r1", runs)),
        writer.submit(plain("plain1")),
        writer.submit(staging(writer, tmp_path / "r2.md", "r2", runs)),
        writer.submit(failing("r3", runs)),
        writer.submit(plain("plain2")),
    ]
    gate.set()
    for future in futures[:3] + futures[4:]:
        future.result(timeout=10)
    with pytest.raises(ValueError):
        futures[3].result(timeout=10)
    writer.stop()
    assert actions(tmp_path / "m.sqlite") == ["r1", "plain1", "r2", "plain2"]
