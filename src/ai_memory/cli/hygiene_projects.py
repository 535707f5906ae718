"""``rename-project``, ``move-project``, ``merge-project`` and ``uninstall``.

The project commands ask the running server (``POST /admin/hygiene/...``) when
one owns the data dir, so its writer and its hooks see the change at once; with
no server they take the data dir's lock and run the same operation in-process.
``uninstall`` edits the agents' configs in this process (see cli/uninstall.py).
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ai_memory.cli.hygiene import DryRun, confirm, run_operation, show
from ai_memory.cli.options import DataDir, Json, ServerUrl, load_config_owning
from ai_memory.cli.output import emit_json, err, out, styled

if TYPE_CHECKING:
    from ai_memory.hygiene.report import HygieneReport
    from ai_memory.runtime import Runtime

Yes = Annotated[bool, typer.Option("--yes", help="Confirm the change (not needed with --dry-run).")]
InWorkspace = Annotated[str, typer.Option("--workspace", "-w", help="Workspace of the project.")]


class OnCollision(StrEnum):
    refuse = "refuse"
    keep_dst = "keep-dst"
    suffix = "suffix"


def register(app: typer.Typer) -> None:
    app.command("rename-project")(rename_project)
    app.command("move-project")(move_project)
    app.command("merge-project")(merge_project)
    app.command("uninstall")(uninstall)


def rename_project(
    old: Annotated[str, typer.Argument(help="The project's current name.")],
    new: Annotated[str, typer.Argument(help="Its new name (must not exist yet).")],
    workspace: InWorkspace = "default",
    dry_run: DryRun = False,
    json_output: Json = False,
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Rename a project: every row, page version and file; the old name stays an alias."""
    from ai_memory.core.identity import Scope
    from ai_memory.hygiene.projects import rename_project as rename

    scope = Scope.of(workspace, old)
    payload = {"workspace": workspace, "project": old, "new_name": new, "dry_run": dry_run}
    _run(
        "rename-project",
        payload,
        lambda runtime: rename(runtime, scope, new, dry_run=dry_run),
        json_output,
        data_dir,
        server,
    )


def move_project(
    project: Annotated[str, typer.Argument(help="The project to move.")],
    to_workspace: Annotated[
        str, typer.Option("--to-workspace", help="Workspace to move it to (must not hold it).")
    ],
    workspace: InWorkspace = "default",
    dry_run: DryRun = False,
    json_output: Json = False,
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Move a project to another workspace, keeping its name; the old place stays an alias."""
    from ai_memory.core.identity import Scope
    from ai_memory.hygiene.projects import move_project as move

    scope = Scope.of(workspace, project)
    payload = {
        "workspace": workspace,
        "project": project,
        "to_workspace": to_workspace,
        "dry_run": dry_run,
    }
    _run(
        "move-project",
        payload,
        lambda runtime: move(runtime, scope, to_workspace, dry_run=dry_run),
        json_output,
        data_dir,
        server,
    )


def merge_project(
    src: Annotated[str, typer.Argument(help="The project to merge (removed afterwards).")],
    into: Annotated[str, typer.Option("--into", help="The project that receives everything.")],
    workspace: InWorkspace = "default",
    into_workspace: Annotated[
        str | None, typer.Option("--into-workspace", help="Workspace of --into (default: same).")
    ] = None,
    on_collision: Annotated[
        OnCollision,
        typer.Option(
            "--on-collision",
            help="A path both projects hold: refuse (default), keep-dst (drop SRC's page), "
            "or suffix (keep SRC's as <name>-<src>.md).",
        ),
    ] = OnCollision.refuse,
    yes: Yes = False,
    dry_run: DryRun = False,
    json_output: Json = False,
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Merge SRC into another project: pages, links, sessions, observations, handoffs."""
    from ai_memory.core.identity import Scope
    from ai_memory.hygiene.merge import merge_project as merge

    confirm(yes, dry_run, f"merging {src} into {into} removes {src}")
    source = Scope.of(workspace, src)
    target = Scope.of(into_workspace or workspace, into)
    payload = {
        "workspace": workspace,
        "project": src,
        "into": into,
        "into_workspace": into_workspace,
        "on_collision": on_collision.value,
        "dry_run": dry_run,
    }
    _run(
        "merge-project",
        payload,
        lambda runtime: merge(
            runtime, source, target, on_collision=on_collision.value, dry_run=dry_run
        ),
        json_output,
        data_dir,
        server,
    )


def uninstall(
    purge_data: Annotated[
        bool,
        typer.Option("--purge-data", help="Delete the data dir too (refused while a server runs)."),
    ] = False,
    yes: Yes = False,
    dry_run: DryRun = False,
    json_output: Json = False,
    data_dir: DataDir = None,
) -> None:
    """Remove ai-memory's hooks, MCP entries and service from every agent config it wrote."""
    import os
    from pathlib import Path

    from ai_memory.cli.service import service_for
    from ai_memory.cli.uninstall import uninstall as take_out
    from ai_memory.config import Config

    what = "uninstall edits your agents' configs" + (" and deletes the data" if purge_data else "")
    confirm(yes, dry_run, what)
    config = Config.load(data_dir, os.environ)
    home = Path(os.environ.get("HOME") or Path.home())
    report = take_out(
        home,
        config.data_dir,
        service=service_for(config),
        purge_data=purge_data,
        dry_run=dry_run,
    )
    if json_output:
        emit_json(report.to_json())
        return
    verb = "would" if dry_run else "did"
    for path, change in report.details["files"].items():
        restored = f" from {change['backup']}" if "backup" in change else ""
        out.print(f"{verb} {change['action']} {path}{restored}", soft_wrap=True, highlight=False)
    if "service" in report.details:
        out.print(f"{verb} remove {report.details['service']}", soft_wrap=True, highlight=False)
    if "purge_data" in report.details:
        out.print(f"{verb} delete {report.details['purge_data']}", soft_wrap=True, highlight=False)
    if not report.files and "purge_data" not in report.details:
        out.print("nothing of ai-memory's found; nothing to change")


def _run(
    operation: str,
    payload: dict[str, Any],
    local: Callable[[Runtime], HygieneReport],
    json_output: bool,
    data_dir: DataDir,
    server: str | None,
) -> None:
    """The server's answer when one owns the data dir, else ``local`` under its lock."""
    config = load_config_owning(data_dir)
    report = run_operation(config, server, operation, payload, local)
    show(report, json_output)
    if report.collisions and report.dry_run and not json_output:
        err.print(styled("collisions:", "yellow"), "choose --on-collision keep-dst or suffix")
