"""A page write run in place by a lone request: the same write as a queued one, its file
lasting when it is answered, and back on the queue while the disk is slow."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from pathlib import Path

import pytest

from ai_memory.core.errors import PreconditionFailed
from ai_memory.core.identity import Scope
from ai_memory.core.page import WriteResult
from ai_memory.runtime import Runtime
from ai_memory.store.commands import Rerunnable
from ai_memory.store.disk_waits import SLOW_S, DiskWaits
from ai_memory.store.files import FileStage, staging_dir
from ai_memory.store.writer import Writer

SCOPE = Scope.of("default", "in-place")


@pytest.fixture
def writer(tmp_path: Path):  # type: ignore[no-untyped-def]
    started = Writer(tmp_path / "memory.sqlite")
    started.files.stage_under(tmp_path / "wiki")
    started.start()
    yield started
    started.stop()


def file_command(files: FileStage, path: Path, data: bytes) -> Rerunnable[int]:
    """Stages ``data`` at ``path`` and records a row; tells which thread ran it."""

    def command(conn: sqlite3.Connection) -> int:
        files.write(path, data)
        conn.execute(
            "INSERT INTO audit_log(at, actor, action, detail) VALUES ('t', 'test', 'file', '{}')"
        )
        return threading.get_ident()

    return Rerunnable(command)


def test_a_file_command_runs_in_place_and_its_file_lasts_when_answered(
    writer: Writer, tmp_path: Path
) -> None:
    target = tmp_path / "wiki" / "notes" / "a.md"
    target.parent.mkdir(parents=True)
    done = writer.run_if_idle(file_command(writer.files, target, b"# A\n"), files=True)
    assert done is not None and done.done()
    assert done.result() == threading.get_ident()
    assert target.read_bytes() == b"# A\n"  # renamed into place before the answer
    assert list(staging_dir(tmp_path / "wiki").iterdir()) == []  # no temp file left
    with sqlite3.connect(writer.db_path) as conn:
        assert conn.execute("SELECT count(*) FROM audit_log WHERE action = 'file'").fetchone() == (
            1,
        )


def test_after_a_slow_wait_for_the_disk_file_commands_are_queued(
    writer: Writer, tmp_path: Path
) -> None:
    target = tmp_path / "wiki" / "b.md"
    for _ in range(10):
        writer.disk_waits.record(SLOW_S * 10)  # a disk that stays slow
    assert writer.run_if_idle(file_command(writer.files, target, b"# B\n"), files=True) is None
    assert not target.exists()
    # A command that stages no files still runs in place: it does not wait for the disk.
    plain = writer.run_if_idle(lambda conn: threading.get_ident())
    assert plain is not None and plain.result() == threading.get_ident()
    # The queued way stores the same file.
    assert writer.call(file_command(writer.files, target, b"# B\n")) != threading.get_ident()
    assert target.read_bytes() == b"# B\n"


def test_one_slow_wait_leaves_the_way_open_a_slow_disk_closes_it() -> None:
    waits = DiskWaits()
    assert waits.fast  # nothing seen yet
    for _ in range(50):
        waits.record(SLOW_S / 5)  # an idle disk
    waits.record(SLOW_S * 8)  # a host's hiccup
    assert waits.fast
    for _ in range(5):
        waits.record(SLOW_S * 8)  # a disk that stays slow
    assert not waits.fast
    for _ in range(30):
        waits.record(SLOW_S / 5)  # queued writes go on recording: fast again
    assert waits.fast


def test_a_lone_page_write_is_the_write_a_queued_one_is(runtime: Runtime) -> None:
    wiki = runtime.wiki
    body = "---\ntags: [wal]\n---\n# Write-ahead log\n\nSee [[concepts/fsync.md]].\n"

    async def both() -> tuple[WriteResult, WriteResult]:
        alone = await wiki.awrite_page(SCOPE.page("concepts/alone.md"), body, lone_request=True)
        queued = await wiki.awrite_page(SCOPE.page("concepts/queued.md"), body)
        return alone, queued

    alone, queued = asyncio.run(both())
    assert (alone.version, alone.created, alone.changed) == (1, True, True)
    assert (queued.version, queued.created, queued.changed) == (1, True, True)
    files = [wiki.file_path(SCOPE.page(f"concepts/{n}.md")) for n in ("alone", "queued")]
    alone_text, queued_text = (f.read_text() for f in files)
    assert "# Write-ahead log" in alone_text
    assert _without_times(alone_text) == _without_times(queued_text)
    read = wiki.read_page(SCOPE.page("concepts/alone.md"))
    assert read["links"][0]["path"] == "concepts/fsync.md"
    assert "wal" in read["tags"]


def test_a_lone_page_write_keeps_preconditions_and_unchanged_writes(runtime: Runtime) -> None:
    wiki = runtime.wiki
    ref = SCOPE.page("decisions/keep.md")

    async def run() -> None:
        first = await wiki.awrite_page(ref, "# Keep\n\nv1\n", lone_request=True)
        again = await wiki.awrite_page(ref, "# Keep\n\nv1\n", lone_request=True)
        assert again.changed is False and again.page_id == first.page_id
        with pytest.raises(PreconditionFailed):
            await wiki.awrite_page(ref, "# Keep\n\nv2\n", create_only=True, lone_request=True)
        second = await wiki.awrite_page(
            ref, "# Keep\n\nv2\n", expected_page_id=first.page_id, lone_request=True
        )
        assert second.version == 2

    asyncio.run(run())
    assert "v2" in wiki.file_path(ref).read_text()
    assert [v["version"] for v in wiki.history(ref)] == [2, 1]


def _without_times(text: str) -> str:
    """The file without its created/updated lines (the two writes ran at other times)."""
    kept = [line for line in text.splitlines() if not line.startswith(("created:", "updated:"))]
    return "\n".join(kept).replace("alone", "queued")
