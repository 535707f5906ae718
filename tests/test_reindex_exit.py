"""A direct ``ai-memory reindex`` ends losing nothing: its lines reach a file
(block-buffered, unlike a terminal), its status is kept, no worker outlives it, and the
data dir is left for the next command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import clean_env
from tests.test_reindex_stream import PAGES, write_wiki


def reindex_argv(data_dir: Path) -> list[str]:
    """The command as its own process, the way a user runs it."""
    return [sys.executable, "-m", "ai_memory", "reindex", "--data-dir", str(data_dir)]


def reindex_into(data_dir: Path, out: Path, err: Path) -> int:
    with out.open("w") as stdout, err.open("w") as stderr:
        done = subprocess.run(
            reindex_argv(data_dir),
            stdout=stdout,
            stderr=stderr,
            env=clean_env(),
            timeout=120,
        )
    return done.returncode


def test_the_summary_reaches_a_file_and_the_next_run_finds_the_index(
    data_dir: Path, tmp_path: Path
) -> None:
    write_wiki(data_dir)
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    assert reindex_into(data_dir, out, err) == 0
    first = out.read_text()
    assert first.startswith(f"reindexed {PAGES + 2} files: ") and first.endswith(" files/s)\n")
    added = int(first.split(": ", 1)[1].split(" added")[0])
    assert added >= PAGES
    # The lock, the WAL and the workers are all gone: a second run sees every file indexed.
    assert reindex_into(data_dir, out, err) == 0
    assert f"0 added, 0 updated, 0 removed, {added} unchanged" in out.read_text()
    assert not (data_dir / "db" / "memory.sqlite-wal").exists()


def test_a_refused_run_keeps_its_status_and_its_error(tmp_path: Path) -> None:
    out, err = tmp_path / "out.txt", tmp_path / "err.txt"
    assert reindex_into(tmp_path / "missing", out, err) == 1
    assert out.read_text() == ""
    assert err.read_text().startswith("error: no data dir at ")


def test_no_worker_outlives_the_command(data_dir: Path) -> None:
    """A worker left running would hold the output pipes open, and this would time out."""
    write_wiki(data_dir)
    done = subprocess.run(
        reindex_argv(data_dir),
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout.startswith("reindexed ")
