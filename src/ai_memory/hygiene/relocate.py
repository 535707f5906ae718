"""Moving every row and file of one project to another name, workspace or project.

Rename, move to another workspace and merge are one operation with a different
target: a plan read in one snapshot (what moves, which links are rewritten,
which paths collide), then one writer command that re-keys every row, stages
every file of the folder at its new place, rewrites the linking pages through
``Wiki.write_command`` (new versions, so history shows why the text changed),
records the old name as an alias and writes the audit row. Files land before
the COMMIT (the writer's file stage), git is checkpointed right after it. A dry
run is the same plan read on a reader, so its report is the real run's.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.paths import TEMP_PREFIX
from ai_memory.hygiene.relink import relink
from ai_memory.hygiene.report import HygieneReport
from ai_memory.runtime import Runtime
from ai_memory.store import pages, project_moves
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

    def where(self, ref: PageRef) -> PageRef:
        """Where the page that was at ``ref`` is once the plan ran."""
        if ref.scope != self.src:
            return ref
        return PageRef(self.dst.workspace, self.dst.project, self.renamed.get(ref.path, ref.path))

    def report(self, dry_run: bool) -> HygieneReport:
        report = HygieneReport(
            self.operation,
            dry_run,
            target={"from": str(self.src), "to": str(self.dst)},
            rows=dict(self.rows),
            pages=[self.where(self.src.page(p)).relpath for p in self.moved],
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
    plan = Plan(operation, src, dst)
    if decide is not None:
        decide(conn, plan)
    plan.rows = project_moves.count_rows(conn, src)
    latest = project_moves.latest_paths(conn, src)
    plan.moved = [path for path in latest if path not in plan.dropped]
    plan.files = [
        (rel, _renamed_file(rel, plan))
        for rel in folder_files(root / src.workspace / src.project)
        if rel not in plan.dropped
    ]
    for path in plan.moved:
        body = _body(conn, latest[path])
        new = relink(body, src.page(path), plan.where(src.page(path)), plan.where)
        if new != body:
            plan.rewrites.append((plan.where(src.page(path)), new))
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
    if not folder.is_dir():
        return []
    return sorted(
        file.relative_to(folder).as_posix()
        for file in folder.rglob("*")
        if file.is_file() and not file.name.startswith(TEMP_PREFIX)
    )


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
    if dry_run:

        def preview(conn: sqlite3.Connection) -> Plan:
            check(conn)
            return read_plan(conn, wiki.root, operation, src, dst, decide)

        return runtime.readers.read(preview).report(dry_run=True)

    def command(conn: sqlite3.Connection) -> Plan:
        check(conn)
        plan = read_plan(conn, wiki.root, operation, src, dst, decide)
        if apply_decisions is not None:
            apply_decisions(conn, plan, wiki)
        carry_out(conn, wiki, plan)
        return plan

    plan = runtime.writer.call(command, timeout=None)
    _after_commit(runtime, plan)
    return plan.report(dry_run=False)


def carry_out(conn: sqlite3.Connection, wiki: Wiki, plan: Plan) -> None:
    """The writer part: rows, files, rewritten links, alias and audit, in one transaction."""
    now = wiki.clock()
    project_moves.move_rows(conn, plan.src, plan.dst, now)
    old_root = wiki.root / plan.src.workspace / plan.src.project
    new_root = wiki.root / plan.dst.workspace / plan.dst.project
    for old, new in plan.files:
        wiki.writer.files.write(new_root / new, (old_root / old).read_bytes())
        wiki.writer.files.delete(old_root / old)
    for rel in plan.dropped:
        wiki.writer.files.delete(old_root / rel)
    for ref, body in plan.rewrites:
        wiki.write_command(ref, body, actor=ACTOR)(conn)
    project_moves.alias(conn, plan.src, plan.dst, now)
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
        ),
    )


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


def _renamed_file(rel: str, plan: Plan) -> str:
    return plan.renamed.get(rel, rel)


def _body(conn: sqlite3.Connection, page_id: int) -> str:
    return str(conn.execute("SELECT body FROM pages WHERE id = ?", (page_id,)).fetchone()[0])
