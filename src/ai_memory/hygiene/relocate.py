"""Moving every row and file of one project to another name, workspace or project.

Rename, move to another workspace and merge are one operation with a different
target: a plan read in one snapshot (what moves, which links are rewritten,
which paths collide), then one writer command that re-keys every row, renames
every file of the folder to its new place, rewrites the linking pages through
``Wiki.write_command`` (new versions, so history shows why the text changed),
records the old name as an alias and writes the audit row. Files land before
the COMMIT; git is checkpointed right after it. A dry run is the same plan read
on a reader, so its report is the real run's.

A crash after the renames and before the COMMIT would leave the files at the
new place and the rows at the old one; the journal written before the first
rename lets the next start put every file back first (hygiene/journal.py), so
the operation can simply be run again.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.core.errors import Conflict
from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.paths import TEMP_PREFIX
from ai_memory.hygiene import journal
from ai_memory.hygiene.exclusive import one_at_a_time
from ai_memory.hygiene.relink import relink
from ai_memory.hygiene.report import HygieneReport
from ai_memory.runtime import Runtime
from ai_memory.store import pages, project_moves
from ai_memory.store.acting import acting
from ai_memory.store.files import fsync_dir
from ai_memory.wiki.wiki import Wiki

ACTOR = "hygiene"


@dataclass(slots=True)
class Plan:
    """What one relocation does, read in one snapshot of the index and the folder."""

    operation: str
    src: Scope
    dst: Scope
    rows: dict[str, int] = field(default_factory=dict)
    files: list[tuple[str, str]] = field(default_factory=list)  # project-relative old, new
    moved: list[str] = field(default_factory=list)  # latest page paths in src, as moved
    rewrites: list[tuple[PageRef, str]] = field(default_factory=list)  # page now, new body
    renamed: dict[str, str] = field(default_factory=dict)  # src path -> path in dst
    dropped: list[str] = field(default_factory=list)  # src paths dst's page replaces
    collisions: list[str] = field(default_factory=list)
    seen: tuple[object, ...] = ()  # the index's fingerprint when the plan was read
    listed: list[str] = field(default_factory=list)  # the folder's files then

    def where(self, ref: PageRef) -> PageRef:
        """Where the page that was at ``ref`` is once the plan ran."""
        if ref.scope != self.src:
            return ref
        return PageRef(self.dst.workspace, self.dst.project, self.renamed.get(ref.path, ref.path))

    def _at(self, path: str) -> PageRef:
        return PageRef(self.src.workspace, self.src.project, path)

    def report(self, dry_run: bool) -> HygieneReport:
        report = HygieneReport(
            self.operation,
            dry_run,
            target={"from": str(self.src), "to": str(self.dst)},
            rows=dict(self.rows),
            pages=[self.where(self._at(p)).relpath for p in self.moved],
            files=[f"{self.dst.workspace}/{self.dst.project}/{new}" for _, new in self.files],
            collisions=list(self.collisions),
        )
        report.details = {
            "relinked": sorted(ref.relpath for ref, _ in self.rewrites),
            "renamed": dict(sorted(self.renamed.items())),
            "dropped": sorted(self.dropped),
            "alias": f"{self.src} -> {self.dst}",
        }
        report.pages.extend(r.relpath for r, _ in self.rewrites if r.scope != self.dst)
        return report


def read_plan(
    conn: sqlite3.Connection,
    root: Path,
    operation: str,
    src: Scope,
    dst: Scope,
    decide: Callable[[sqlite3.Connection, Plan], None] | None = None,
) -> Plan:
    """The plan of moving ``src`` to ``dst``; ``decide`` settles a merge's collisions."""
    plan = Plan(operation, src, dst, seen=project_moves.fingerprint(conn))
    plan.listed = folder_files(root / src.workspace / src.project)
    if decide is not None:
        decide(conn, plan)
    plan.rows = project_moves.count_rows(conn, src)
    latest = project_moves.latest_paths(conn, src)
    plan.moved = [path for path in latest if path not in plan.dropped]
    plan.files = [(rel, _renamed_file(rel, plan)) for rel in plan.listed if rel not in plan.dropped]
    for path in plan.moved:
        body = _body(conn, latest[path])
        was = PageRef(src.workspace, src.project, path)
        new = relink(body, was, plan.where(was), plan.where)
        if new != body:
            plan.rewrites.append((plan.where(was), new))
    for workspace, project, path in project_moves.linking_pages(conn, src):
        ref = PageRef(workspace, project, path)
        row = pages.latest(conn, ref)
        if row is None:
            continue
        new = relink(row["body"], ref, ref, plan.where)
        if new != row["body"]:
            plan.rewrites.append((ref, new))
    return plan


def folder_files(folder: Path) -> list[str]:
    """Every file of a project's folder, relative to it (temp files of a crash aside)."""
    found: list[str] = []
    for top, _, names in os.walk(folder):
        base = Path(top).relative_to(folder).as_posix()
        prefix = "" if base == "." else base + "/"
        found.extend(prefix + name for name in names if not name.startswith(TEMP_PREFIX))
    return sorted(found)


def run(
    runtime: Runtime,
    operation: str,
    src: Scope,
    dst: Scope,
    *,
    dry_run: bool,
    check: Callable[[sqlite3.Connection], None],
    decide: Callable[[sqlite3.Connection, Plan], None] | None = None,
    apply_decisions: Callable[[sqlite3.Connection, Plan, Wiki], None] | None = None,
) -> HygieneReport:
    """Check, plan and (unless ``dry_run``) carry the plan out in one writer command."""
    wiki = runtime.wiki

    def preview(conn: sqlite3.Connection) -> Plan:
        check(conn)
        return read_plan(conn, wiki.root, operation, src, dst, decide)

    # The plan (relinking every page included) is read on a reader, outside the write
    # lock; the writer re-reads it only when a page or the folder changed in between.
    planned = runtime.readers.read(preview)
    if dry_run:
        return planned.report(dry_run=True)

    def command(conn: sqlite3.Connection) -> Plan:
        check(conn)
        plan = planned
        folder = wiki.root / src.workspace / src.project
        if project_moves.fingerprint(conn) != plan.seen or folder_files(folder) != plan.listed:
            plan = read_plan(conn, wiki.root, operation, src, dst, decide)
        if apply_decisions is not None:
            apply_decisions(conn, plan, wiki)
        carry_out(conn, wiki, plan, journal_file)
        return plan

    journal_file = journal.journal_path(runtime.config.db_path)
    with one_at_a_time(runtime.config.db_path, operation):
        try:
            plan = runtime.writer.call(command, timeout=None)
        finally:
            journal.end(journal_file)  # committed, or rolled back with the files undone
        _after_commit(runtime, plan)
    return plan.report(dry_run=False)


def carry_out(conn: sqlite3.Connection, wiki: Wiki, plan: Plan, journal_file: Path) -> None:
    """The writer part: rows, files, rewritten links, alias and audit, in one transaction;
    ``journal_file`` lets the next start undo the files should a crash stop it midway."""
    now = wiki.clock()
    project_moves.move_rows(conn, plan.src, plan.dst, now)
    old_root = wiki.root / plan.src.workspace / plan.src.project
    new_root = wiki.root / plan.dst.workspace / plan.dst.project
    pairs = [(old_root / old, new_root / new) for old, new in plan.files]
    journal.begin(journal_file, plan.src, pairs, _originals(wiki, plan))
    moved = move_files(pairs)
    try:
        for rel in plan.dropped:
            wiki.writer.files.delete(old_root / rel)
        for ref, body in plan.rewrites:
            wiki.write_command(ref, body, actor=ACTOR)(conn)
        project_moves.alias(conn, plan.src, plan.dst, now)
    except BaseException:
        undo_moves(moved)  # the savepoint rolls the rows back; the files follow them
        raise
    report = plan.report(dry_run=False)
    detail = {**report.target, "rows": report.rows, "details": report.details}
    conn.execute(
        pages.INSERT_AUDIT,
        (
            now,
            ACTOR,
            plan.operation,
            plan.dst.workspace,
            plan.dst.project,
            None,
            json.dumps(detail),
            acting().name,
        ),
    )


def move_files(pairs: list[tuple[Path, Path]]) -> list[tuple[Path, Path]]:
    """Rename each file to its new place, then fsync every folder touched once.

    A rename moves no data (the bytes are durable already), so a project of thousands
    of files moves in milliseconds instead of a copy and an fsync per file. It happens
    inside the writer's command, before the COMMIT, like every file change: the files
    are at their new place before the rows that say so. A failure undoes what moved.
    """
    moved: list[tuple[Path, Path]] = []
    try:
        for old, new in pairs:
            if new.exists():
                raise Conflict(f"cannot move {old.name}: {new} is in the way")
            new.parent.mkdir(parents=True, exist_ok=True)
            os.rename(old, new)
            moved.append((old, new))
        for folder in sorted({p.parent for pair in moved for p in pair}):
            if folder.is_dir():
                fsync_dir(folder)
    except BaseException:
        undo_moves(moved)
        raise
    return moved


def undo_moves(moved: list[tuple[Path, Path]]) -> None:
    for old, new in reversed(moved):
        with contextlib.suppress(OSError):
            os.rename(new, old)


def _after_commit(runtime: Runtime, plan: Plan) -> None:
    """Checkpoint git with the old paths gone and the new ones added; drop empty folders."""
    src, dst = plan.src, plan.dst
    relpaths = [f"{src.workspace}/{src.project}/{old}" for old, _ in plan.files]
    relpaths += [f"{src.workspace}/{src.project}/{rel}" for rel in plan.dropped]
    relpaths += [f"{dst.workspace}/{dst.project}/{new}" for _, new in plan.files]
    relpaths += [ref.relpath for ref, _ in plan.rewrites]
    runtime.checkpointer.notify(*relpaths)
    runtime.checkpointer.flush()
    _remove_empty(runtime.wiki.root / src.workspace / src.project)


def _remove_empty(folder: Path) -> None:
    if not folder.is_dir():
        return
    for sub in sorted((p for p in folder.rglob("*") if p.is_dir()), reverse=True):
        if not any(sub.iterdir()):
            sub.rmdir()
    if not any(folder.iterdir()):
        folder.rmdir()
        parent = folder.parent
        if parent.is_dir() and not any(parent.iterdir()):
            parent.rmdir()


def _originals(wiki: Wiki, plan: Plan) -> list[Path]:
    """Where each file about to be rewritten or dropped is before the moves."""
    src_root = wiki.root / plan.src.workspace / plan.src.project
    moved_from = {new: old for old, new in plan.files}
    found = [src_root / rel for rel in plan.dropped]
    for ref, _ in plan.rewrites:
        if ref.scope == plan.dst and ref.path in moved_from:
            found.append(src_root / moved_from[ref.path])
        else:
            found.append(wiki.file_path(ref))
    return found


def _renamed_file(rel: str, plan: Plan) -> str:
    return plan.renamed.get(rel, rel)


def _body(conn: sqlite3.Connection, page_id: int) -> str:
    return str(conn.execute("SELECT body FROM pages WHERE id = ?", (page_id,)).fetchone()[0])
