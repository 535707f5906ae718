"""A relocation's journal: what a crash between its file renames and its COMMIT undoes.

Rename, move and merge rename the project's files (and rewrite the pages that link
to it) inside the writer's command, before the COMMIT. A SIGKILL in between would
leave the files at the new place and the rows at the old one; the next start would
then index them as a second project. So the journal (every rename, and the bytes of
every file about to be rewritten or dropped) is made durable before the first rename
and removed after the COMMIT. At the next start, before anything reads the wiki: if
the source project is still in the index the COMMIT never happened, and every file
goes back as it was; if it is gone, the operation is complete and the journal goes.
Either way every page and session is in exactly one place, and a reindex changes
nothing.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from pathlib import Path

from ai_memory.core.identity import Scope
from ai_memory.store.files import atomic_write, fsync_dir

JOURNAL_NAME = "relocate-journal.json"
SOURCE_ROW = "SELECT 1 FROM projects WHERE workspace = ? AND name = ?"


def journal_path(db_path: Path) -> Path:
    return db_path.parent / JOURNAL_NAME


def begin(
    path: Path,
    src: Scope,
    moves: list[tuple[Path, Path]],
    originals: list[Path],
) -> None:
    """Record ``moves`` (old, new) and the current bytes of ``originals`` (files about to
    be rewritten or removed, named where they are before the moves), durably."""
    saved = {
        str(p): p.read_bytes().decode("utf-8", "surrogateescape") for p in originals if p.is_file()
    }
    entry = {
        "src": [src.workspace, src.project],
        "moves": [[str(old), str(new)] for old, new in moves],
        "originals": saved,
    }
    atomic_write(path, json.dumps(entry).encode("utf-8"))
    fsync_dir(path.parent)


def end(path: Path) -> None:
    path.unlink(missing_ok=True)


def recover(db_path: Path) -> bool:
    """Undo a relocation a crash interrupted before its COMMIT; True when files went back."""
    path = journal_path(db_path)
    if not path.is_file():
        return False
    try:
        entry = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        end(path)  # cut short while being written: no file had moved yet
        return False
    if not _source_remains(db_path, Scope(*entry["src"])):
        end(path)  # committed: the files are where the rows say
        return False
    for old, new in reversed(entry["moves"]):
        if os.path.exists(new) and not os.path.exists(old):
            Path(old).parent.mkdir(parents=True, exist_ok=True)
            os.rename(new, old)
    for name, text in entry["originals"].items():
        atomic_write(Path(name), text.encode("utf-8", "surrogateescape"))
    for _, new in entry["moves"]:
        with contextlib.suppress(OSError):  # the folders the moves made, now empty
            os.removedirs(Path(new).parent)
    end(path)
    return True


def _source_remains(db_path: Path, src: Scope) -> bool:
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True)
    try:
        return conn.execute(SOURCE_ROW, (src.workspace, src.project)).fetchone() is not None
    finally:
        conn.close()
