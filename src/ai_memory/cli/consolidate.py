"""``ai-memory consolidate``: a completed session into durable pages (HTTP; needs a provider)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ai_memory.cli.options import (
    DataDir,
    Json,
    Project,
    ServerUrl,
    Workspace,
    client_for,
    load_config,
    scope_for,
)
from ai_memory.cli.output import emit_json, out

# One provider call over a long session, plus the write: minutes on a slow local model.
TIMEOUT_S = 900.0


def register(app: typer.Typer) -> None:
    app.command("consolidate")(consolidate)


def consolidate(
    session: Annotated[
        str | None,
        typer.Option("--session", help="Session id (default: the latest completed one)."),
    ] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    multi_page: Annotated[
        bool | None,
        typer.Option(
            "--multi-page/--single-page",
            help="Write concept/decision/gotcha/procedure pages too, or the session page only "
            "(default: the consolidation.multi_page setting).",
            show_default=False,
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Ask the provider, write nothing, show the plan.")
    ] = False,
    jobs: Annotated[
        bool,
        typer.Option("--jobs", help="List the queue's jobs (failed ones with their error)."),
    ] = False,
    as_json: Json = False,
) -> None:
    """Consolidate a completed session into a richer page and linked durable pages."""
    client = client_for(load_config(data_dir), server)
    if jobs:
        _show_jobs(client.request("GET", "/api/v1/consolidate/jobs"), as_json)
        return
    scope = scope_for(workspace, project)
    body: dict[str, Any] = {
        "workspace": scope.workspace,
        "project": scope.project,
        "dry_run": dry_run,
    }
    if session:
        body["session_id"] = session
    if multi_page is not None:
        body["multi_page"] = multi_page
    data = client.request("POST", "/api/v1/consolidate", json=body, timeout=TIMEOUT_S)
    if as_json:
        emit_json(data)
        return
    _show_run(data)


def _show_run(data: dict[str, Any]) -> None:
    sid = data.get("session_id", "?")
    if data.get("running"):
        out.print(f"session {sid}: already being consolidated by the server", highlight=False)
        return
    verb = "would write" if data.get("dry_run") else "wrote"
    if data.get("already_done"):
        verb = "already consolidated; wrote"
    out.print(f"session {sid}: {verb} {data.get('session_page', '')}", highlight=False)
    for page in data.get("pages", []):
        out.print(f"  {page['action']}: {page['path']} — {page['title']}", highlight=False)


def _show_jobs(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(data)
        return
    counts = data["counts"]
    out.print(", ".join(f"{state} {n}" for state, n in counts.items()), highlight=False)
    for job in data["jobs"]:
        line = f"  #{job['id']} {job['state']} {job['project']} session {job['session_id']}"
        line += f" (tries {job['attempts']})"
        if job["state"] == "failed" and job["last_error"]:
            line += f": {job['last_error']}"
        out.print(line, highlight=False)
