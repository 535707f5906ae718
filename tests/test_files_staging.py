"""Temp files of a wiki's pages are staged beside the wiki, not inside it."""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.core.errors import Conflict
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.store.commands import Rerunnable
from ai_memory.store.files import TEMP_PREFIX, remove_temp_files, staging_dir
from ai_memory.store.writer import Writer


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[Writer]:
    writer = Writer(tmp_path / "m.sqlite")
    (tmp_path / "wiki").mkdir()
    writer.files.stage_under(tmp_path / "wiki")
    writer.start()
    yield writer
    writer.stop()


def temp_files(folder: Path) -> list[str]:
    return [name for _, _, names in os.walk(folder) for name in names if TEMP_PREFIX in name]


def writing(writer: Writer, target: Path, data: bytes) -> Rerunnable[None]:
    def command(conn: sqlite3.Connection) -> None:
        writer.files.write(target, data)

    return Rerunnable(command)


def test_files_land_in_new_folders_and_no_temp_file_is_left(writer: Writer, tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    gate = threading.Event()
    writer.submit(lambda conn: gate.wait(5))
    futures = [
        writer.submit(writing(writer, wiki / f"ws/p{n % 3}/deep/n{n}.md", b"x%d" % n))
        for n in range(9)
    ]
    gate.set()
    for future in futures:
        future.result(timeout=10)
    assert (wiki / "ws/p2/deep/n8.md").read_bytes() == b"x8"
    assert staging_dir(wiki).is_dir()
    assert temp_files(wiki) == [] and temp_files(staging_dir(wiki)) == []


def test_a_path_that_cannot_hold_a_file_fails_alone_with_staging(
    writer: Writer, tmp_path: Path
) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "plain").write_bytes(b"a file, not a folder")
    (wiki / "folder.md").mkdir()
    gate = threading.Event()
    writer.submit(lambda conn: gate.wait(5))
    good = writer.submit(writing(writer, wiki / "good.md", b"good"))
    under_file = writer.submit(writing(writer, wiki / "plain" / "x.md", b"bad"))
    on_folder = writer.submit(writing(writer, wiki / "folder.md", b"bad"))
    gate.set()
    good.result(timeout=10)
    with pytest.raises(Conflict, match="folder path is a file"):
        under_file.result(timeout=10)
    with pytest.raises(Conflict, match="folder of that name"):
        on_folder.result(timeout=10)
    # A command that is not rerunnable creates its temp file at once, on the writer.
    with pytest.raises(Conflict, match="folder path is a file"):
        writer.call(lambda conn: writer.files.write(wiki / "plain" / "y.md", b"bad"))
    assert (wiki / "good.md").read_bytes() == b"good"
    assert (wiki / "plain").read_bytes() == b"a file, not a folder"
    assert temp_files(tmp_path) == []


def test_start_up_cleanup_removes_temp_files_from_the_staging_folder(tmp_path: Path) -> None:
    wiki = tmp_path / "wiki"
    (wiki / "ws").mkdir(parents=True)
    staging_dir(wiki).mkdir()
    (staging_dir(wiki) / f"{TEMP_PREFIX}a.md.dead").write_bytes(b"half a write")
    (wiki / "ws" / f"{TEMP_PREFIX}b.md.dead").write_bytes(b"half a write")
    (staging_dir(wiki) / "kept").write_bytes(b"not a temp file")
    assert remove_temp_files(wiki) == 2
    assert temp_files(tmp_path) == []
    assert (staging_dir(wiki) / "kept").exists()


def test_a_page_write_stages_outside_the_wiki(runtime: Runtime) -> None:
    wiki = runtime.wiki.root
    runtime.wiki.write_page(Scope.of(None, "api").page("notes/new/a.md"), "alpha")
    assert (wiki / "default/api/notes/new/a.md").read_text().endswith("alpha")
    assert staging_dir(wiki).parent == wiki.parent and staging_dir(wiki).is_dir()
    assert temp_files(wiki) == [] and temp_files(staging_dir(wiki)) == []
