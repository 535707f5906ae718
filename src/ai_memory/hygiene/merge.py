"""Merging one project into another: two names that were always one project.

Everything of SRC moves into DST as a rename would move it (pages with every
version, links, sessions, observations, handoffs, ...), then SRC is gone and
its name is an alias of DST. A path both projects hold (any version: a
deleted page keeps its history) is a collision; collisions are reported before
anything moves, and nothing moves unless ``on_collision`` says how to settle
them:

* ``keep-dst``: DST's page stays; SRC's page at that path (every version of it,
  and its file) is dropped. Its text stays in the wiki's git history.
* ``suffix``: SRC's page moves beside DST's as ``<name>-<src>.md`` (``-2``,
  ``-3``, ... if that is taken too); links that reached it are rewritten.

A row that cannot move because DST holds its twin (the same session id, a
learning watermark) is dropped with SRC: DST's row wins, its count is reported.
"""

from __future__ import annotations

import sqlite3
from typing import Literal

from ai_memory.core.errors import Conflict, InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.hygiene import relocate
from ai_memory.hygiene.projects import check_movable, require_project
from ai_memory.hygiene.relocate import Plan, folder_files
from ai_memory.hygiene.report import HygieneReport
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.wiki.wiki import Wiki

OnCollision = Literal["refuse", "keep-dst", "suffix"]
POLICIES: tuple[str, ...] = ("refuse", "keep-dst", "suffix")

SRC_PATHS = "SELECT DISTINCT path FROM pages WHERE workspace = ? AND project = ?"
PATH_ROWS = "SELECT id, is_latest FROM pages WHERE workspace = ? AND project = ? AND path = ?"
# Tables that name a page by (workspace, project, path) beside the pages themselves.
PATH_TABLES = ("page_feedback", "page_evidence", "pending_writes")


def merge_project(
    runtime: Runtime,
    src: Scope,
    dst: Scope,
    *,
    on_collision: str = "refuse",
    dry_run: bool = False,
) -> HygieneReport:
    """Move everything of ``src`` into ``dst`` and remove ``src``."""
    if on_collision not in POLICIES:
        raise InvalidInput(
            f"on_collision must be one of {', '.join(POLICIES)}, not {on_collision!r}"
        )
    check_movable(src, dst)

    def check(conn: sqlite3.Connection) -> None:
        require_project(conn, src)
        if not pages.project_exists(conn, dst):
            raise NotFound(f"no project {dst} to merge into; to rename {src}, use rename-project")

    def decide(conn: sqlite3.Connection, plan: Plan) -> None:
        plan.collisions = collisions(conn, runtime.wiki, src, dst)
        if plan.collisions and on_collision == "refuse":
            if dry_run:
                return
            raise Conflict(
                f"{len(plan.collisions)} path(s) exist in both {src} and {dst}: "
                + ", ".join(plan.collisions[:10])
                + "; nothing was moved. Choose --on-collision keep-dst or suffix "
                "(--dry-run shows what each does)"
            )
        if on_collision == "keep-dst":
            plan.dropped = list(plan.collisions)
        elif on_collision == "suffix":
            taken = _taken(conn, runtime.wiki, src) | _taken(conn, runtime.wiki, dst)
            plan.renamed = {path: _suffixed(path, src.project, taken) for path in plan.collisions}

    report = relocate.run(
        runtime,
        "merge-project",
        src,
        dst,
        dry_run=dry_run,
        check=check,
        decide=decide,
        apply_decisions=_settle,
    )
    report.details["on_collision"] = on_collision
    return report


def collisions(conn: sqlite3.Connection, wiki: Wiki, src: Scope, dst: Scope) -> list[str]:
    """Paths (pages of any version, and other files of the folders) both projects hold."""
    return sorted(_taken(conn, wiki, src) & _taken(conn, wiki, dst))


def _taken(conn: sqlite3.Connection, wiki: Wiki, scope: Scope) -> set[str]:
    rows = conn.execute(SRC_PATHS, (scope.workspace, scope.project))
    found = {row[0] for row in rows}
    return found | set(folder_files(wiki.root / scope.workspace / scope.project))


def _suffixed(path: str, project: str, taken: set[str]) -> str:
    stem, dot, ext = path.rpartition(".")
    if not dot:
        stem, ext = path, ""
    for n in range(1, 10_000):
        tail = f"-{project}" + (f"-{n}" if n > 1 else "")
        candidate = f"{stem}{tail}.{ext}" if ext else f"{stem}{tail}"
        if candidate not in taken:
            taken.add(candidate)
            return candidate
    raise Conflict(f"no free name beside {path}")


def _settle(conn: sqlite3.Connection, plan: Plan, wiki: Wiki) -> None:
    """Carry out the collision decisions in SRC before its rows move."""
    src = plan.src
    for path in plan.dropped:
        _drop_page(conn, src, path)
    for old, new in plan.renamed.items():
        _rename_page(conn, src, old, new)


def _drop_page(conn: sqlite3.Connection, scope: Scope, path: str) -> None:
    key = (scope.workspace, scope.project, path)
    rows = conn.execute(PATH_ROWS, key).fetchall()
    for row in rows:
        if row["is_latest"]:
            pages.drop_derived(conn, row["id"])
        conn.execute("DELETE FROM page_vectors WHERE page_id = ?", (row["id"],))
        conn.execute("UPDATE sessions SET page_id = NULL WHERE page_id = ?", (row["id"],))
    for table in PATH_TABLES:
        conn.execute(f"DELETE FROM {table} WHERE workspace = ? AND project = ? AND path = ?", key)
    conn.execute("DELETE FROM pages WHERE workspace = ? AND project = ? AND path = ?", key)


def _rename_page(conn: sqlite3.Connection, scope: Scope, old: str, new: str) -> None:
    key = (new, scope.workspace, scope.project, old)
    conn.execute("UPDATE pages SET path = ? WHERE workspace = ? AND project = ? AND path = ?", key)
    conn.execute(
        "UPDATE links SET src_path = ? WHERE workspace = ? AND project = ? AND src_path = ?", key
    )
    for table in PATH_TABLES:
        conn.execute(
            f"UPDATE {table} SET path = ? WHERE workspace = ? AND project = ? AND path = ?", key
        )
