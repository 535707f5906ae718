"""Re-deriving the index from the markdown files.

``reconcile`` runs at every start (it picks up hand edits and whatever a crash
left between a file write and its commit); ``full=True`` is ``ai-memory reindex``,
which also rebuilds every derived row (FTS, links, entities) from scratch.

It is one pass of streaming work: files are read and parsed chunk by chunk (in
worker processes when a :class:`~ai_memory.wiki.parse_pool.ParsePool` is given)
while the writer commits the chunks before them, a few chunks in flight at most,
so memory stays flat and the cost per file is the same at any size.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections import deque
from collections.abc import Callable, Container, Iterable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.page import PageDocument
from ai_memory.store import pages
from ai_memory.store.stamps import Key, Stamp, Stat, latest_with_stamps, record
from ai_memory.wiki.indexed import latest_hashes
from ai_memory.wiki.parse import Chunk, Outcome, digest, document, parse_chunk
from ai_memory.wiki.wiki import Wiki

if TYPE_CHECKING:
    from ai_memory.wiki.parse_pool import ParsePool

CHUNK = 128  # files per chunk a worker parses and the writer indexes in one command
IN_FLIGHT = 4  # chunks queued at the writer before the reader waits for it
Progress = Callable[[int, int], None]
# A file changed this recently may change again within the same modification-time tick,
# so its stamp is not recorded: the next check reads it again.
SETTLED_NS = 2_000_000_000


@dataclass(slots=True)
class ReconcileReport:
    files: int = 0
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    warnings: list[str] = field(default_factory=list)
    changed_paths: list[str] = field(default_factory=list)  # wiki-relative, for git

    @property
    def changed(self) -> int:
        return self.added + self.updated + self.deleted

    def merge(self, other: ReconcileReport) -> None:
        """Add the counts of one committed chunk (made by the writer thread)."""
        self.added += other.added
        self.updated += other.updated
        self.deleted += other.deleted
        self.unchanged += other.unchanged
        self.changed_paths.extend(other.changed_paths)


def survey(
    root: str, report: ReconcileReport, known: Container[Key], stamps: dict[Key, Stat]
) -> tuple[list[Key], dict[Key, Stat], list[PageRef]]:
    """Every page file under ``root`` (laid out as ``<workspace>/<project>/<path>.md``):
    its key, the size and mtime of those settled for a while, and those to read (their
    stat is not their ``stamps`` entry). One pass, keyed by plain tuples: a page object
    is made only for a file to read.

    A path the index holds (``known``) was validated when it was indexed.
    """
    settled_before = time.time_ns() - SETTLED_NS
    keys: list[Key] = []
    stats: dict[Key, Stat] = {}
    to_read: list[PageRef] = []
    for relative in markdown_files(Path(root)):
        parts = relative.split("/", 2)
        if len(parts) == 3 and (key := (parts[0], parts[1], parts[2])) in known:
            ref = None
        elif (ref := _ref_for(relative, report)) is not None:
            key, relative = _key(ref), ref.relpath
        else:
            continue
        keys.append(key)
        try:
            info = os.stat(f"{root}/{relative}")
        except OSError:  # gone or unreadable: reading it reports why
            info = None
        if info is not None and info.st_mtime_ns < settled_before:
            stat = stats[key] = (info.st_size, info.st_mtime_ns)
            if stat == stamps.get(key):
                continue  # what it was when it hashed to what the index holds
        to_read.append(ref or PageRef(*key))
    return keys, stats, to_read


def markdown_files(root: Path) -> list[str]:
    """Root-relative paths of the ``.md`` files outside dot-folders, sorted."""
    found: list[str] = []
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".")]
        base = os.path.relpath(folder, root)
        prefix = "" if base == "." else base.replace(os.sep, "/") + "/"
        found.extend(prefix + n for n in names if n.endswith(".md") and not n.startswith("."))
    found.sort()
    return found


def reconcile(
    wiki: Wiki,
    *,
    full: bool = False,
    progress: Progress | None = None,
    pool: ParsePool | None = None,
    checkpoint: bool = True,
) -> ReconcileReport:
    """``checkpoint=False`` leaves the git checkpoint of the changed files to the caller."""
    report = ReconcileReport()
    # A file whose bytes hash to what the index holds is not parsed again, unless the
    # derived rows are being rebuilt; one whose size and mtime are those it had when it
    # last hashed to that is not even read. That keeps a start over a large wiki short.
    known, current = wiki.readers.read(latest_with_stamps)
    # Every file's stat is taken before any file is read: an edit since moves it.
    files, stats, to_read = survey(str(wiki.root), report, known, {} if full else current)
    report.files = len(files)
    if full:
        wiki.writer.call(pages.clear_derived, timeout=None)
    report.unchanged = done = len(files) - len(to_read)
    chunks = _chunks(str(wiki.root), to_read, known, full)
    parsed = pool.stream(chunks) if pool is not None else map(parse_chunk, chunks)
    in_flight: deque[tuple[Future[ReconcileReport], int]] = deque()
    for outcomes in parsed:
        fresh = _fresh_stamps(outcomes, known, stats)
        in_flight.append((_submit(wiki, outcomes, full, report, fresh), len(outcomes)))
        while len(in_flight) > IN_FLIGHT or (in_flight and in_flight[0][0].done()):
            done += _settle(in_flight.popleft(), report)
            if progress:
                progress(done, len(files))
    while in_flight:
        done += _settle(in_flight.popleft(), report)
        if progress:
            progress(done, len(files))
    seen = set(files)
    missing = [PageRef(*key) for key in known if key not in seen]
    if missing:
        report.merge(wiki.writer.call(_delete_missing(wiki, missing), timeout=None))
    if checkpoint and wiki.checkpointer is not None and report.changed:
        wiki.checkpointer.notify(*report.changed_paths)
    return report


def _key(ref: PageRef) -> Key:
    return (ref.workspace, ref.project, ref.path)


def _fresh_stamps(
    outcomes: list[Outcome], known: dict[Key, str], stats: dict[Key, Stat]
) -> list[tuple[Key, Stamp]]:
    fresh: list[tuple[Key, Stamp]] = []
    for outcome in outcomes:
        stat = stats.get(_key(outcome.ref))
        digest_ = outcome.doc.content_hash if outcome.doc is not None else None
        if digest_ is None and outcome.unchanged:
            digest_ = known.get(_key(outcome.ref))
        if stat is not None and digest_ is not None:
            fresh.append((_key(outcome.ref), (*stat, digest_)))
    return fresh


def _chunks(
    root: str, files: list[PageRef], known: dict[tuple[str, str, str], str], full: bool
) -> Iterator[Chunk]:
    for start in range(0, len(files), CHUNK):
        refs = files[start : start + CHUNK]
        items = [(ref, known.get((ref.workspace, ref.project, ref.path))) for ref in refs]
        yield Chunk(root, items, full)


def _submit(
    wiki: Wiki,
    outcomes: Iterable[Outcome],
    full: bool,
    report: ReconcileReport,
    fresh: list[tuple[Key, Stamp]],
) -> Future[ReconcileReport]:
    batch: list[tuple[PageRef, PageDocument]] = []
    skipped = ReconcileReport()
    for outcome in outcomes:
        report.warnings.extend(outcome.warnings)
        if outcome.doc is not None:
            batch.append((outcome.ref, outcome.doc))
        elif outcome.unchanged:
            skipped.unchanged += 1
    if not batch and not fresh:
        done: Future[ReconcileReport] = Future()
        done.set_result(skipped)
        return done
    apply = _apply(wiki, batch, full, skipped)

    def command(conn: sqlite3.Connection) -> ReconcileReport:
        record(conn, fresh)
        return apply(conn)

    return wiki.writer.submit(command, timeout=None)


def _settle(entry: tuple[Future[ReconcileReport], int], report: ReconcileReport) -> int:
    future, files = entry
    report.merge(future.result())
    return files


def reconcile_paths(wiki: Wiki, relpaths: list[str]) -> ReconcileReport:
    """Re-derive the given files (relative to the wiki root): index edits, drop deletions.

    The index is read once for all of them, before any file is read: a write that
    lands in between is newer than what was read, and must not be undone. A file that
    hashes to what the index holds (the server's own write, above all) ends there.
    """
    report = ReconcileReport()
    root = str(wiki.root)
    keys = {relpath: _split_key(relpath) for relpath in relpaths}
    indexed = wiki.readers.read(partial(latest_hashes, keys=filter(None, keys.values())))
    present: list[tuple[PageRef, PageDocument]] = []
    missing: list[PageRef] = []
    read_at: dict[PageRef, int | None] = {}
    for relpath, key in keys.items():
        known = indexed.get(key) if key is not None else None
        ref: PageRef | None = PageRef(*key) if known is not None and key is not None else None
        if ref is None:  # not indexed under that name: a path to check first
            if (ref := _ref_for(relpath, report)) is None:
                continue
            if _key(ref) != key:  # named differently on disk than in the index
                found = wiki.readers.read(partial(latest_hashes, keys=[_key(ref)]))
                known = found.get(_key(ref))
        read_at[ref], indexed_hash = known if known is not None else (None, None)
        try:
            with open(os.path.join(root, relpath), "rb") as file:
                data = file.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            missing.append(ref)
            continue
        except OSError as exc:
            report.warnings.append(f"skipped {relpath}: {exc}")
            continue
        if digest(data) == indexed_hash:
            report.unchanged += 1  # the server's own write, or an edit already indexed
            continue
        if (doc := document(ref, data, report.warnings)) is not None:
            present.append((ref, doc))
    report.files = len(present)
    if present:
        command = _apply(wiki, present, False, ReconcileReport(), read_at)
        report.merge(wiki.writer.call(command, timeout=None))
    if missing:
        wiki.writer.call(_delete_refs(wiki, missing, report, read_at), timeout=None)
    if wiki.checkpointer is not None and report.changed:
        wiki.checkpointer.notify(*report.changed_paths)
    return report


def _split_key(relpath: str) -> Key | None:
    parts = relpath.split("/", 2)
    return (parts[0], parts[1], parts[2]) if len(parts) == 3 else None


def _ref_for(relpath: str, report: ReconcileReport) -> PageRef | None:
    parts = relpath.split("/", 2)
    try:
        if len(parts) < 3:
            raise InvalidInput("not inside <workspace>/<project>/")
        return Scope.of(parts[0], parts[1]).page(parts[2])
    except InvalidInput as exc:
        report.warnings.append(f"skipped {relpath}: {exc}")
        return None


def _delete_refs(
    wiki: Wiki, refs: list[PageRef], report: ReconcileReport, read_at: dict[PageRef, int | None]
) -> Callable[[sqlite3.Connection], None]:
    def command(conn: sqlite3.Connection) -> None:
        now = wiki.clock()
        for ref in refs:
            current = pages.latest(conn, ref)
            if current is not None and current["id"] == read_at.get(ref):
                pages.mark_deleted(conn, current["id"], now)
                report.deleted += 1
                report.changed_paths.append(ref.relpath)

    return command


def _apply(
    wiki: Wiki,
    batch: list[tuple[PageRef, PageDocument]],
    full: bool,
    report: ReconcileReport,
    read_at: dict[PageRef, int | None] | None = None,
) -> Callable[[sqlite3.Connection], ReconcileReport]:
    """Index ``batch`` in the writer; the counts come back in ``report``, which the writer
    thread alone touches until the command has committed."""

    def command(conn: sqlite3.Connection) -> ReconcileReport:
        now = wiki.clock()
        for ref, doc in batch:
            current = pages.latest(conn, ref)
            current_id = int(current["id"]) if current is not None else None
            if read_at is not None and current_id != read_at.get(ref):
                report.unchanged += 1  # written since the file was read: that write wins
                continue
            if current is not None and current["content_hash"] == doc.content_hash:
                report.unchanged += 1
                if full:
                    pages.index_derived(conn, current["id"], ref, doc)
                continue
            pages.ensure_project(conn, ref.scope, now, on_disk=True)
            pages.insert_version(conn, ref, doc, now=now, actor="disk")
            if current is None:
                report.added += 1
            else:
                report.updated += 1
            report.changed_paths.append(ref.relpath)
        return report

    return command


def _delete_missing(
    wiki: Wiki, missing: list[PageRef]
) -> Callable[[sqlite3.Connection], ReconcileReport]:
    """Mark deleted the pages the index held when the check began and no file holds now.

    Only those: the latest pages come from the check's one read of the index, not a
    second pass over it, and a page written since that read (its file after the walk)
    is left alone. One deleted since is no longer latest and is skipped."""

    def command(conn: sqlite3.Connection) -> ReconcileReport:
        report = ReconcileReport()
        now = wiki.clock()
        for ref in missing:
            row = pages.latest(conn, ref)
            if row is not None:
                pages.mark_deleted(conn, row["id"], now)
                report.deleted += 1
                report.changed_paths.append(f"{ref.workspace}/{ref.project}/{ref.path}")
        return report

    return command
