"""``ai-memory pending-writes list/show/approve/reject`` and ``ai-memory auto-improve``.

Thin HTTP clients of ``/api/v1/pending-writes`` and ``/api/v1/auto-improve``: the
server owns the writer, the wiki and the provider.
"""

from __future__ import annotations

import getpass
from typing import Annotated, Any, Literal

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
from ai_memory.cli.output import emit_json, keep_whole, out, styled

group = typer.Typer(
    name="pending-writes",
    help="The learning loop's queue: proposed edits to rules and procedures.",
    no_args_is_help=True,
)
State = Literal["pending", "applied", "rejected", "refused", "all"]
PendingId = Annotated[int, typer.Argument(min=1, help="The pending write's id (from list).")]
DIFF_STYLES = {"+": "green", "-": "red", "@": "cyan"}


def register(app: typer.Typer) -> None:
    app.add_typer(group)
    app.command("auto-improve")(auto_improve)


def _by() -> str:
    try:
        return f"cli:{getpass.getuser()}"[:200]
    except (KeyError, OSError):  # no user name in this environment
        return "cli"


@group.command("list")
def list_writes(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    state: Annotated[State, typer.Option(help="Which decisions to list.")] = "pending",
    limit: Annotated[int, typer.Option(min=1, max=500)] = 100,
    as_json: Json = False,
) -> None:
    """List proposed edits, newest first (every project unless --project names one)."""
    config = load_config(data_dir)
    params: dict[str, Any] = {"state": state, "limit": limit}
    if project:
        params.update(workspace=workspace or "default", project=project)
    data = client_for(config, server).request("GET", "/api/v1/pending-writes", params=params)
    if as_json:
        emit_json(data)
        return
    rows = data["pending_writes"]
    if not rows:
        empty = {"pending": "nothing waits for a decision", "all": "no pending writes yet"}
        out.print(empty.get(state, f"no {state} pending writes"))
        return
    from rich.table import Table

    table = Table("id", "state", "project", "path", "session", "proposed at", "rationale")
    for row in rows:
        table.add_row(
            str(row["id"]),
            row["state"],
            f"{row['workspace']}/{row['project']}",
            row["path"],
            row["session_id"] or "",
            row["created_at"][:16],
            row["rationale"],
        )
    out.print(keep_whole(table, "path"))


@group.command("show")
def show(
    pending_id: PendingId,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Show one proposal and the unified diff from its snapshot to the proposed body."""
    config = load_config(data_dir)
    data = client_for(config, server).request("GET", f"/api/v1/pending-writes/{pending_id}")
    if as_json:
        emit_json(data)
        return
    out.print(
        f"#{data['id']} {data['state']}  {data['workspace']}/{data['project']}:{data['path']}",
        highlight=False,
    )
    out.print(f"from session {data['session_id'] or '-'} at {data['created_at']}", highlight=False)
    if data["rationale"]:
        out.print(f"why: {data['rationale']}", highlight=False)
    if data["decided_at"]:
        out.print(f"decided by {data['decided_by']} at {data['decided_at']}", highlight=False)
    if data["error"]:
        out.print(styled(data["error"], "yellow"))
    out.print()
    for line in data["diff"].splitlines():
        out.print(
            styled(line, DIFF_STYLES.get(line[:1], ""))
            if line[:3] not in ("---", "+++")
            else styled(line, "bold")
        )


@group.command("approve")
def approve(
    pending_id: PendingId, data_dir: DataDir = None, server: ServerUrl = None, as_json: Json = False
) -> None:
    """Apply a proposal as a new page version; refused if the page changed since."""
    _decide(pending_id, "approve", {"by": _by()}, data_dir, server, as_json)


@group.command("reject")
def reject(
    pending_id: PendingId,
    reason: Annotated[str, typer.Option(help="Why, kept with the decision.")] = "",
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Reject a proposal; who and when are recorded, nothing is written."""
    _decide(pending_id, "reject", {"by": _by(), "reason": reason}, data_dir, server, as_json)


def _decide(
    pending_id: int,
    action: str,
    body: dict[str, Any],
    data_dir: DataDir,
    server: ServerUrl,
    as_json: bool,
) -> None:
    config = load_config(data_dir)
    url = f"/api/v1/pending-writes/{pending_id}/{action}"
    data = client_for(config, server).request("POST", url, json=body)
    if as_json:
        emit_json(data)
        return
    where = f"{data['workspace']}/{data['project']}:{data['path']}"
    if data["state"] == "applied":
        out.print(
            styled("applied", "green"),
            f"#{pending_id} as page_id {data['result_page_id']} of {where}",
        )
    else:
        out.print(styled(data["state"], "yellow"), f"#{pending_id} ({where})")


def auto_improve(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    session: Annotated[
        str | None, typer.Option(help="Session id (default: the latest completed one).")
    ] = None,
    dry_run: Annotated[bool, typer.Option(help="Show the proposals; store nothing.")] = False,
    as_json: Json = False,
) -> None:
    """Review a session with the LLM now and queue its proposed rule/procedure edits."""
    config = load_config(data_dir)
    scope = scope_for(workspace, project)
    payload: dict[str, Any] = {
        "workspace": scope.workspace,
        "project": scope.project,
        "dry_run": dry_run,
    }
    if session:
        payload["session_id"] = session
    client = client_for(config, server)
    data = client.request("POST", "/api/v1/auto-improve", json=payload, timeout=660.0)
    if as_json:
        emit_json(data)
        return
    verb = "would propose" if dry_run else "proposed"
    out.print(
        f"session {data['session_id']}: {verb} {len(data['proposals'])} edit(s)", highlight=False
    )
    for item in data["proposals"]:
        label = f"#{item['id']} " if item.get("id") else ""
        out.print(f"  {label}{item['path']} [{item['state']}] {item['rationale']}", highlight=False)
    for item in data["skipped"]:
        out.print(styled(f"  skipped {item['path']}: {item['reason']}", "yellow"))
