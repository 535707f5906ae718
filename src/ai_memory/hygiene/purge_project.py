"""``purge-project``: everything a project holds, gone from the index and the wiki.

Steps of bounded length remove what capture recorded (observations a few hundred at a
time, then sessions, handoffs and the rest), then the pages (every version, with what is
derived from them), so other writes get the lock in between; a last one removes the
project row and rewrites the full-text indexes. Then the project's folder goes and the
removal is checkpointed in git (history keeps the text, as for any removed page).
Links from other projects into it become unresolved, like links to any removed page.
"""

from __future__ import annotations

import shutil
import sqlite3
import time
from collections.abc import Mapping
from pathlib import Path

from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import GLOBAL_PROJECT, Scope
from ai_memory.hygiene.exclusive import one_at_a_time
from ai_memory.hygiene.report import HygieneReport
from ai_memory.hygiene.scrub import scrubbing, settle
from ai_memory.runtime import Runtime
from ai_memory.store import hygiene_sql as sql
from ai_memory.store import pages, sweep
from ai_memory.store.files import fsync_dir

# How long one step removing pages may hold the write lock (at least one page a step).
STEP_BUDGET_S = 0.05
# The capture tables go in the first step; the pages and their companions in the next.
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
    with one_at_a_time(runtime.config.db_path, "purge-project"):
        _purge(runtime, report, scope, folder, actor)
    return report


def _purge(runtime: Runtime, report: HygieneReport, scope: Scope, folder: Path, actor: str) -> None:
    """The steps of a real purge, then the folder and the checkpoint."""
    wiki = runtime.wiki
    params = {"ws": scope.workspace, "proj": scope.project}

    def capture(conn: sqlite3.Connection) -> None:
        conn.execute(sql.UNINDEX_PROJECT_OBSERVATIONS, params)
        for table in sorted(_CAPTURE):
            conn.execute(f"DELETE FROM {table} WHERE workspace = :ws AND project = :proj", params)

    # Everything is counted in the writer, just before the steps that remove it.
    removed, _ = wiki.writer.call(lambda conn: _plan(conn, scope, params))
    while wiki.writer.call(
        scrubbing(lambda conn: _remove_some_observations(conn, params), optimize=False),
        timeout=wiki.write_timeout,
    ):
        pass
    wiki.writer.call(scrubbing(capture, optimize=False), timeout=wiki.write_timeout)
    while wiki.writer.call(
        scrubbing(lambda conn: _remove_some_pages(conn, params), optimize=False),
        timeout=wiki.write_timeout,
    ):
        pass  # a bounded transaction per step, so other writes get the lock in between

    def finish(conn: sqlite3.Connection) -> None:
        for row in conn.execute(sql.PROJECT_LATEST_IDS, params).fetchall():
            pages.drop_derived(conn, int(row["id"]))  # written since the steps: none, usually
        sql.delete_project_rows(conn, params)
        pages.audit(
            conn,
            now=wiki.clock(),
            actor=actor,
            action="purge-project",
            ref=None,
            detail={"workspace": scope.workspace, "project": scope.project, "rows": removed},
        )

    wiki.writer.call(scrubbing(finish), timeout=wiki.write_timeout)
    report.rows = removed
    # After the COMMIT and outside the lock (one unlink and folder sync per file would hold
    # it for seconds): a crash before this leaves files the next start indexes again, so
    # the purge is undone rather than half done, and running it again finishes it.
    shutil.rmtree(folder, ignore_errors=True)
    if folder.parent.is_dir():
        fsync_dir(folder.parent)
    settle(runtime, report, report.files)


def _remove_some_observations(conn: sqlite3.Connection, params: Mapping[str, object]) -> int:
    ids = [int(r[0]) for r in conn.execute(sql.SOME_PROJECT_OBSERVATIONS, params)]
    if ids:
        marks = ",".join("?" * len(ids))
        conn.execute(sweep.UNINDEX_OBSERVATIONS.format(marks=marks), ids)
        conn.execute(sweep.DELETE_OBSERVATIONS.format(marks=marks), ids)
    return len(ids)


def _remove_some_pages(conn: sqlite3.Connection, params: Mapping[str, object]) -> int:
    """Every version of some of the project's pages, until the step's time budget is used."""
    deadline = time.perf_counter() + STEP_BUDGET_S
    done = 0
    for (path,) in conn.execute(sql.SOME_PROJECT_PATHS, params).fetchall():
        if done and time.perf_counter() > deadline:
            break
        page = {**params, "path": path}
        latest = conn.execute(sql.LATEST_PAGE, page).fetchone()
        if latest is not None:
            pages.drop_derived(conn, int(latest["id"]))
        sql.delete_page_rows(conn, page)
        done += 1
    return done


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
