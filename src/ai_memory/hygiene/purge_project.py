"""``purge-project``: everything a project holds, gone from the index and the wiki.

Two writer transactions: first what capture recorded (sessions, observations, handoffs
and the rest), then the pages with everything derived from them and the project row,
their files unlinked in the same transaction; then the project's folder goes and the
removal is checkpointed in git (history keeps the text, as for any removed page).
Links from other projects into it become unresolved, like links to any removed page.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Mapping
from pathlib import Path

from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import GLOBAL_PROJECT, Scope
from ai_memory.hygiene.report import HygieneReport
from ai_memory.hygiene.scrub import scrubbing, truncate_wal
from ai_memory.runtime import Runtime
from ai_memory.store import hygiene_sql as sql
from ai_memory.store import pages

# The capture tables go in the first step; the pages and their companions in the second.
_CAPTURE = frozenset(
    {"sessions", "observations", "handoffs", "page_evidence", "llm_jobs", "pending_writes"}
)


def purge_project(
    runtime: Runtime,
    scope: Scope,
    *,
    dry_run: bool = False,
    force_global: bool = False,
    actor: str = "cli",
) -> HygieneReport:
    """Remove every page, session, observation, handoff, link, entity, vector and feedback
    row of ``scope``, and its wiki folder. ``_global`` is refused without ``force_global``."""
    if scope.project == GLOBAL_PROJECT and not force_global:
        raise InvalidInput(
            f"refusing to purge {GLOBAL_PROJECT}: it holds the preferences every project "
            "shares; pass --force-global to purge it anyway"
        )
    wiki = runtime.wiki
    params = {"ws": scope.workspace, "proj": scope.project}
    counts, paths = runtime.readers.read(lambda conn: _plan(conn, scope, params))
    folder = wiki.root / scope.workspace / scope.project
    files = _files(folder, wiki.root)
    report = HygieneReport(
        "purge-project",
        dry_run,
        target={"workspace": scope.workspace, "project": scope.project},
        rows=counts,
        pages=[scope.page(path).relpath for path in paths],
        files=files,
    )
    if dry_run:
        return report

    def capture(conn: sqlite3.Connection) -> dict[str, int]:
        removed, _ = _plan(conn, scope, params)
        conn.execute(sql.UNINDEX_PROJECT_OBSERVATIONS, params)
        for table in sorted(_CAPTURE):
            conn.execute(f"DELETE FROM {table} WHERE workspace = :ws AND project = :proj", params)
        return {t: n for t, n in removed.items() if t in _CAPTURE}

    captured = wiki.writer.call(scrubbing(capture), timeout=wiki.write_timeout)

    def knowledge(conn: sqlite3.Connection) -> dict[str, int]:
        counted, _ = _plan(conn, scope, params)
        removed = {**captured, **{t: n for t, n in counted.items() if t not in _CAPTURE}}
        for row in conn.execute(sql.PROJECT_LATEST_IDS, params).fetchall():
            pages.drop_derived(conn, int(row["id"]))
        sql.delete_project_rows(conn, params)
        pages.audit(
            conn,
            now=wiki.clock(),
            actor=actor,
            action="purge-project",
            ref=None,
            detail={"workspace": scope.workspace, "project": scope.project, "rows": removed},
        )
        for relpath in files:
            wiki.writer.files.delete(wiki.root / relpath)
        return removed

    report.rows = wiki.writer.call(scrubbing(knowledge), timeout=wiki.write_timeout)
    shutil.rmtree(folder, ignore_errors=True)
    runtime.checkpointer.notify(*files)
    runtime.checkpointer.flush()
    if not truncate_wal(runtime.config.db_path):
        report.warnings.append(
            "a reader kept the WAL from being truncated; later writes overwrite what it holds"
        )
    return report


def _plan(
    conn: sqlite3.Connection, scope: Scope, params: Mapping[str, object]
) -> tuple[dict[str, int], list[str]]:
    if conn.execute(sql.PROJECT_EXISTS, params).fetchone() is None:
        raise NotFound(f"no project {scope.workspace}/{scope.project}")
    paths = [str(r["path"]) for r in conn.execute(sql.PROJECT_PATHS, params)]
    return sql.project_counts(conn, params), paths


def _files(folder: Path, root: Path) -> list[str]:
    """Every file under the project's folder, as wiki-relative paths (hand-made ones too)."""
    if not folder.is_dir():
        return []
    return sorted(str(p.relative_to(root)) for p in folder.rglob("*") if p.is_file())
