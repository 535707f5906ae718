"""The sweep's removals: a tombstone in the index, the file gone, in transactions of bounded length.

A removal is what ``Wiki.delete_page`` does (the last version stays as the
tombstone, the audit log names the action, git keeps the text), with one
difference in how the file goes: the command unlinks it itself, inside the
transaction, and the folders are fsynced after the COMMIT, outside the write
lock. A folder fsync waits for the filesystem journal, which on a busy disk
takes hundreds of milliseconds; under the lock every other write would wait
with it. The order stays safe: the file is unlinked before the tombstone
commits, and only a crash of the whole machine before the folder fsync could
bring an unlinked file back, which the next start indexes as a page again (the
removal is undone, nothing is lost).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.core.identity import PageRef
from ai_memory.store import pages
from ai_memory.store.files import fsync_dir
from ai_memory.wiki.wiki import Wiki

# How long one removal transaction may run before it commits and lets other writes in.
TRANSACTION_BUDGET_S = 0.04


@dataclass(slots=True)
class Removed:
    """What one removal transaction did: per target, whether it went; folders to sync."""

    done: list[bool] = field(default_factory=list)
    folders: set[Path] = field(default_factory=set)


def remove_batch(
    wiki: Wiki, targets: list[tuple[PageRef, int]], actor: str, action: str
) -> Callable[[sqlite3.Connection], Removed]:
    """A writer command removing ``(ref, page_id)`` targets until its time budget is used;
    a page no longer at the version the plan read is left alone (compare-and-set)."""

    def command(conn: sqlite3.Connection) -> Removed:
        out = Removed()
        deadline = time.perf_counter() + TRANSACTION_BUDGET_S
        for ref, page_id in targets:
            if out.done and time.perf_counter() > deadline:
                break  # at least one removal per transaction, so the sweep always advances
            folder = _remove(conn, wiki, ref, page_id, actor, action)
            out.done.append(folder is not None)
            if folder is not None:
                out.folders.add(folder)
        return out

    return command


def _remove(
    conn: sqlite3.Connection, wiki: Wiki, ref: PageRef, page_id: int, actor: str, action: str
) -> Path | None:
    current = pages.latest(conn, ref)
    if current is None or int(current["id"]) != page_id:
        return None  # rewritten or removed since the plan
    now = wiki.clock()
    pages.mark_deleted(conn, page_id, now)
    pages.audit(conn, now=now, actor=actor, action=action, ref=ref, detail={"page_id": page_id})
    path = wiki.file_path(ref)
    path.unlink(missing_ok=True)
    return path.parent


def sync_folders(folders: set[Path]) -> None:
    """Make the unlinks durable, after the COMMIT and outside the write lock."""
    for folder in sorted(folders):
        if folder.is_dir():
            fsync_dir(folder)
