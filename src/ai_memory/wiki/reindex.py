"""Re-deriving the index from the markdown files.

``reconcile`` runs at every start (it picks up hand edits and whatever a crash
left between a file write and its commit); ``full=True`` is ``ai-memory reindex``,
which also rebuilds every derived row (FTS, links, entities) from scratch.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.page import PageDocument
from ai_memory.store import pages
from ai_memory.wiki.document import build_document
from ai_memory.wiki.frontmatter import parse_file
from ai_memory.wiki.wiki import Wiki

BATCH = 200
Progress = Callable[[int, int], None]


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


def scan(root: Path, report: ReconcileReport) -> Iterator[tuple[PageRef, Path]]:
    """Every page file under ``root`` laid out as ``<workspace>/<project>/<path>.md``."""
    for file in sorted(root.rglob("*.md")):
        relative = file.relative_to(root).as_posix()
        if any(part.startswith(".") for part in relative.split("/")):
            continue
        ref = _ref_for(relative, report)
        if ref is not None:
            yield ref, file


def read_file(ref: PageRef, file: Path, report: ReconcileReport) -> bytes | None:
    try:
        return file.read_bytes()
    except OSError as exc:
        report.warnings.append(f"skipped {ref.relpath}: {exc}")
        return None


def document(ref: PageRef, data: bytes, report: ReconcileReport) -> PageDocument | None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        report.warnings.append(f"skipped {ref.relpath}: not UTF-8 ({exc.reason})")
        return None
    try:
        parsed = parse_file(text)
        if parsed.error:
            report.warnings.append(f"{ref.relpath}: {parsed.error}")
        return build_document(ref, parsed.frontmatter, parsed.body, text=text, error=parsed.error)
    except Exception as exc:  # one unreadable file must never stop a start or a reindex
        error = f"frontmatter could not be read ({type(exc).__name__}); indexed as text"
        report.warnings.append(f"{ref.relpath}: {error}")
        return build_document(ref, {}, text, text=text, error=error)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def reconcile(
    wiki: Wiki, *, full: bool = False, progress: Progress | None = None
) -> ReconcileReport:
    report = ReconcileReport()
    files = list(scan(wiki.root, report))
    report.files = len(files)
    if full:
        wiki.writer.call(pages.clear_derived, timeout=None)
    # A file whose bytes hash to what the index holds is not parsed again, unless the
    # derived rows are being rebuilt: that keeps a start over a large wiki short.
    known = {} if full else wiki.readers.read(_latest_hashes)
    seen: set[tuple[str, str, str]] = set()
    for start in range(0, len(files), BATCH):
        batch = []
        for ref, file in files[start : start + BATCH]:
            key = (ref.workspace, ref.project, ref.path)
            seen.add(key)
            data = read_file(ref, file, report)
            if data is not None and known.get(key) == _digest(data):
                report.unchanged += 1
                continue
            doc = None if data is None else document(ref, data, report)
            if doc is not None:
                batch.append((ref, doc))
        wiki.writer.call(_apply(wiki, batch, full, report), timeout=None)
        if progress:
            progress(min(start + BATCH, len(files)), len(files))
    wiki.writer.call(_delete_missing(wiki, seen, report), timeout=None)
    if wiki.checkpointer is not None and report.changed:
        wiki.checkpointer.notify(*report.changed_paths)
    return report


def reconcile_paths(wiki: Wiki, relpaths: list[str]) -> ReconcileReport:
    """Re-derive the given files (relative to the wiki root): index edits, drop deletions."""
    report = ReconcileReport()
    present: list[tuple[PageRef, PageDocument]] = []
    missing: list[PageRef] = []
    read_at: dict[PageRef, int | None] = {}
    for relpath in relpaths:
        ref = _ref_for(relpath, report)
        if ref is None:
            continue
        # The version the file is compared against is noted before the file is read: a
        # write that lands in between is newer than what was read, and must not be undone.
        read_at[ref], indexed_hash = wiki.readers.read(partial(_latest, ref=ref))
        file = wiki.root / relpath
        if not file.is_file():
            missing.append(ref)
            continue
        data = read_file(ref, file, report)
        if data is not None and _digest(data) == indexed_hash:
            report.unchanged += 1  # the server's own write, or an edit already indexed
            continue
        doc = None if data is None else document(ref, data, report)
        if doc is not None:
            present.append((ref, doc))
    report.files = len(present)
    if present:
        wiki.writer.call(_apply(wiki, present, False, report, read_at), timeout=None)
    if missing:
        wiki.writer.call(_delete_refs(wiki, missing, report, read_at), timeout=None)
    if wiki.checkpointer is not None and report.changed:
        wiki.checkpointer.notify(*report.changed_paths)
    return report


def indexed_under(wiki: Wiki, prefix: str) -> list[str]:
    """Wiki-relative paths of the latest pages beneath the folder ``prefix``."""
    head = prefix.rstrip("/") + "/"

    def query(conn: sqlite3.Connection) -> list[str]:
        rows = conn.execute(pages.ALL_LATEST).fetchall()
        relpaths = (f"{r['workspace']}/{r['project']}/{r['path']}" for r in rows)
        return [relpath for relpath in relpaths if relpath.startswith(head)]

    return wiki.readers.read(query)


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


def _latest(conn: sqlite3.Connection, *, ref: PageRef) -> tuple[int | None, str | None]:
    row = pages.latest(conn, ref)
    return (int(row["id"]), str(row["content_hash"])) if row is not None else (None, None)


def _latest_hashes(conn: sqlite3.Connection) -> dict[tuple[str, str, str], str]:
    rows = conn.execute(pages.ALL_LATEST)
    return {(r["workspace"], r["project"], r["path"]): r["content_hash"] for r in rows}


def _apply(
    wiki: Wiki,
    batch: list[tuple[PageRef, PageDocument]],
    full: bool,
    report: ReconcileReport,
    read_at: dict[PageRef, int | None] | None = None,
) -> Callable[[sqlite3.Connection], None]:
    def command(conn: sqlite3.Connection) -> None:
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
            pages.ensure_project(conn, ref.scope, now)
            pages.insert_version(conn, ref, doc, now=now, actor="disk")
            if current is None:
                report.added += 1
            else:
                report.updated += 1
            report.changed_paths.append(ref.relpath)

    return command


def _delete_missing(
    wiki: Wiki, seen: set[tuple[str, str, str]], report: ReconcileReport
) -> Callable[[sqlite3.Connection], None]:
    def command(conn: sqlite3.Connection) -> None:
        now = wiki.clock()
        for row in conn.execute(pages.ALL_LATEST).fetchall():
            if (row["workspace"], row["project"], row["path"]) not in seen:
                pages.mark_deleted(conn, row["id"], now)
                report.deleted += 1
                report.changed_paths.append(f"{row['workspace']}/{row['project']}/{row['path']}")

    return command
