"""``purge-session``, ``move-session``, ``purge-project``, ``export``: fixing mistakes.

When a server owns the data dir the command asks it (``POST /admin/hygiene/...``);
otherwise it takes the data dir's lock and runs the operation in this process. A purge
removes data for good, so it needs ``--yes`` (or ``--dry-run`` to see what it would do);
no command ever prompts.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ai_memory.cli.options import DataDir, Json, ServerUrl, client_for, load_config_owning
from ai_memory.cli.output import emit_json, err, out, styled
from ai_memory.core.errors import InvalidInput
from ai_memory.hygiene.report import HygieneReport

if TYPE_CHECKING:
    from ai_memory.config import Config

# A purge of a large project rewrites its full-text indexes; give the server time.
TIMEOUT_S = 900.0

Workspace = Annotated[
    str | None, typer.Option("--workspace", "-w", help="Workspace (default: default).")
]
SessionWorkspace = Annotated[
    str | None, typer.Option("--workspace", "-w", help="Its workspace, if the id is in several.")
]
DryRun = Annotated[
    bool, typer.Option("--dry-run", help="Only report what would change; change nothing.")
]
Yes = Annotated[bool, typer.Option("--yes", help="Confirm a removal that cannot be undone.")]


def register(app: typer.Typer) -> None:
    app.command("purge-session")(purge_session)
    app.command("move-session")(move_session)
    app.command("purge-project")(purge_project)
    app.command("export")(export)


def run_operation(
    config: Config,
    server: str | None,
    operation: str,
    body: dict[str, Any],
    local: Callable[[Any], HygieneReport],
) -> HygieneReport:
    """The server's answer when one owns the data dir; else ``local(runtime)`` under the lock."""
    from ai_memory.cli.admin_call import names_a_server, served_or_local

    def ask() -> HygieneReport:
        path = f"/admin/hygiene/{operation}"
        data = client_for(config, server).request("POST", path, json=body, timeout=TIMEOUT_S)
        return HygieneReport.from_json(data)

    if names_a_server(server):  # --server, or signed in: the memory is on that server
        return ask()
    return served_or_local(config, operation, ask, local)


def local_only(operation: str, data_dir: Path | None) -> None:
    """A command that reads a data dir's files has no server route: on a signed-in machine
    (whose memory is on the server) it needs the data dir named, or the server's machine."""
    import os

    from ai_memory import locate

    if data_dir is None and not os.environ.get("AI_MEMORY_DATA_DIR"):
        signed_in = locate.credential(os.environ)
        if signed_in is not None:
            raise InvalidInput(
                f"`ai-memory {operation}` reads a data dir on this machine, and this machine "
                f"is signed in to {signed_in[0] or 'a server'}: run it on the server's machine, "
                "or pass --data-dir to use a data dir here"
            )


def confirm(yes: bool, dry_run: bool, what: str) -> None:
    """No command prompts: a change that needs confirming needs ``--yes`` (or a dry run)."""
    if not yes and not dry_run:
        raise InvalidInput(f"{what}: pass --yes to do it, or --dry-run to see it")


def show(report: HygieneReport, as_json: bool) -> None:
    """The report as JSON, or its summary with the warnings on stderr."""
    if as_json:
        emit_json(report.to_json())
        return
    for line in report.summary_lines():
        if line.lstrip().startswith("warning:"):
            err.print(styled("warning:", "yellow"), line.split("warning:", 1)[1].strip())
        else:
            out.print(line, soft_wrap=True, highlight=False)


def purge_session(
    session_id: Annotated[str, typer.Argument(help="The session id to purge.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: SessionWorkspace = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Its project, if the id is in several.")
    ] = None,
    rewrite_history: Annotated[
        bool,
        typer.Option(
            "--rewrite-history",
            help="Also remove the page from the wiki's git history (backup first; every "
            "clone diverges; refused while a server runs).",
        ),
    ] = False,
    dry_run: DryRun = False,
    yes: Yes = False,
    as_json: Json = False,
) -> None:
    """Remove a session for good: observations, page and its versions, handoffs."""
    from ai_memory.hygiene import history
    from ai_memory.hygiene import sessions as ops

    confirm(yes, dry_run, f"purging session {session_id} cannot be undone")
    if rewrite_history and not dry_run:
        local_only("purge-session --rewrite-history", data_dir)
    config = load_config_owning(data_dir)
    if rewrite_history and not dry_run:
        from ai_memory.cli.admin_call import require_data_dir

        require_data_dir(config, "purge-session --rewrite-history")
        err.print(styled("warning:", "yellow"), history.WARNING)
        report = history.purge_with_history(
            config, session_id, workspace=workspace, project=project
        )
    else:
        body = {
            "session_id": session_id,
            "workspace": workspace,
            "project": project,
            "dry_run": dry_run,
        }
        report = run_operation(
            config,
            server,
            "purge-session",
            body,
            lambda rt: ops.purge_session(
                rt, session_id, workspace=workspace, project=project, dry_run=dry_run
            ),
        )
        if rewrite_history:
            report.warnings.append(f"would also rewrite history: {history.WARNING}")
    show(report, as_json)


def move_session(
    session_id: Annotated[str, typer.Argument(help="The session id to move.")],
    to: Annotated[str, typer.Option("--to", help="The project it belongs to.")],
    to_workspace: Annotated[
        str | None,
        typer.Option("--to-workspace", help="Target workspace (default: default)."),
    ] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: SessionWorkspace = None,
    project: Annotated[
        str | None,
        typer.Option("--project", "-p", help="Its project, if the id is in several."),
    ] = None,
    dry_run: DryRun = False,
    as_json: Json = False,
) -> None:
    """Move a session (row, observations, page, handoffs) to the project it belongs to."""
    from ai_memory.core.identity import Scope
    from ai_memory.hygiene import sessions as ops

    target = Scope.of(to_workspace, to)
    config = load_config_owning(data_dir)
    body = {
        "session_id": session_id,
        "workspace": workspace,
        "project": project,
        "to_project": target.project,
        "to_workspace": target.workspace,
        "dry_run": dry_run,
    }
    report = run_operation(
        config,
        server,
        "move-session",
        body,
        lambda rt: ops.move_session(
            rt, session_id, target, workspace=workspace, project=project, dry_run=dry_run
        ),
    )
    show(report, as_json)


def purge_project(
    project: Annotated[str, typer.Argument(help="The project to purge.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    force_global: Annotated[
        bool, typer.Option("--force-global", help="Allow purging the shared _global project.")
    ] = False,
    dry_run: DryRun = False,
    yes: Yes = False,
    as_json: Json = False,
) -> None:
    """Remove a project for good: every page, session, observation, handoff, its folder."""
    from ai_memory.core.identity import Scope
    from ai_memory.hygiene.purge_project import purge_project as purge

    scope = Scope.of(workspace, project)
    confirm(yes, dry_run, f"purging project {scope} cannot be undone")
    config = load_config_owning(data_dir)
    body = {
        "project": scope.project,
        "workspace": scope.workspace,
        "dry_run": dry_run,
        "force_global": force_global,
    }
    report = run_operation(
        config,
        server,
        "purge-project",
        body,
        lambda rt: purge(rt, scope, dry_run=dry_run, force_global=force_global),
    )
    show(report, as_json)


def export(
    project: Annotated[str, typer.Option("--project", "-p", help="The project to export.")],
    to: Annotated[Path, typer.Option("--to", help="Folder to write the bundle into.")],
    data_dir: DataDir = None,
    workspace: Workspace = None,
    force: Annotated[
        bool, typer.Option("--force", help="Write into a folder that is not empty.")
    ] = False,
    dry_run: DryRun = False,
    as_json: Json = False,
) -> None:
    """Write a project as plain markdown: its pages as on disk and an index.md."""
    from ai_memory.cli.local_read import read_only
    from ai_memory.core.identity import Scope
    from ai_memory.hygiene.export import export_project

    scope = Scope.of(workspace, project)
    local_only("export", data_dir)
    config = load_config_owning(data_dir)
    with read_only(config) as conn:
        report = export_project(
            conn, config.data_dir, config.wiki_dir, scope, to, force=force, dry_run=dry_run
        )
    show(report, as_json)
