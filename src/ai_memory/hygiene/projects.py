"""Renaming a project, and moving it to another workspace.

Both re-key every row of the project (every page version, links, entities,
sessions, observations, handoffs, vectors, feedback, audit rows, jobs, the
project row with its remote), move its wiki folder with a git checkpoint, and
rewrite the pages whose links named it (see :mod:`ai_memory.hygiene.relink`).

The old name becomes an alias of the new one: a checkout whose remote, folder
or ``.ai-memory.toml`` still resolves to the old name has its hook events,
handoffs and briefs land in the renamed project, so the rename sticks for
future sessions without touching the checkout. A target that exists already is
refused: joining two projects is ``merge-project``.
"""

from __future__ import annotations

import sqlite3

from ai_memory.core.errors import Conflict, InvalidInput, NotFound
from ai_memory.core.identity import RESERVED_PROJECTS, Scope, validate_name
from ai_memory.hygiene import relocate
from ai_memory.hygiene.report import HygieneReport
from ai_memory.runtime import Runtime
from ai_memory.store import pages


def rename_project(
    runtime: Runtime, scope: Scope, new_name: str, *, dry_run: bool = False
) -> HygieneReport:
    """Rename ``scope`` to ``new_name`` in the same workspace."""
    target = Scope(scope.workspace, validate_name(new_name, "project"))
    return _relocate(runtime, "rename-project", scope, target, dry_run)


def move_project(
    runtime: Runtime, scope: Scope, workspace: str, *, dry_run: bool = False
) -> HygieneReport:
    """Move ``scope`` to ``workspace``, keeping its name."""
    target = Scope(validate_name(workspace, "workspace"), scope.project)
    return _relocate(runtime, "move-project", scope, target, dry_run)


def _relocate(
    runtime: Runtime, operation: str, src: Scope, dst: Scope, dry_run: bool
) -> HygieneReport:
    check_movable(src, dst)

    def check(conn: sqlite3.Connection) -> None:
        require_project(conn, src)
        pages.refuse_case_twin(conn, dst, besides=src.project)  # a rename in case alone is one
        if pages.project_exists(conn, dst):
            raise Conflict(
                f"project {dst} exists already; to join {src} into it, run `ai-memory "
                f"merge-project {src.project} --into {dst.project} --workspace {src.workspace}"
                + (f" --into-workspace {dst.workspace}`" if dst.workspace != src.workspace else "`")
            )

    return relocate.run(runtime, operation, src, dst, dry_run=dry_run, check=check)


def check_movable(src: Scope, dst: Scope) -> None:
    """Reserved projects are every workspace's own; a project is not moved onto itself."""
    if src == dst:
        raise InvalidInput(f"{src} is already the target: nothing to move")
    for scope in (src, dst):
        if scope.project in RESERVED_PROJECTS:
            raise InvalidInput(
                f"{scope.project} is a reserved project; it cannot be renamed, moved or merged"
            )


def require_project(conn: sqlite3.Connection, scope: Scope) -> None:
    if not pages.project_exists(conn, scope):
        raise NotFound(f"no project {scope}")
