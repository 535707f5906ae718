"""``ai-memory forget-sweep``, ``lint``, ``checkpoints``, ``restore-page``, ``commit`` (HTTP)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

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

# A sweep or lint of a large wiki takes a while (about 40 s for 100,000 pages).
LONG_TIMEOUT_S = 900.0


def register(app: typer.Typer) -> None:
    app.command("forget-sweep")(forget_sweep)
    app.command("lint")(lint)
    app.command("checkpoints")(checkpoints)
    app.command("restore-page")(restore_page)
    app.command("commit")(commit)


def _scope_body(workspace: str | None, project: str | None) -> dict[str, Any]:
    if project is None:
        return {"workspace": workspace} if workspace else {}
    scope = scope_for(workspace, project)
    return {"workspace": scope.workspace, "project": scope.project}


def forget_sweep(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Only this project (default: all).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Only report what the sweep would do.")
    ] = False,
    as_json: Json = False,
) -> None:
    """Forget: expired pages go, cold episodic pages are evicted, old tombstones purged."""
    body = {**_scope_body(workspace, project), "dry_run": dry_run}
    data = client_for(load_config(data_dir), server).request(
        "POST", "/api/v1/forget-sweep", json=body, timeout=LONG_TIMEOUT_S
    )
    if as_json:
        emit_json(data)
        return
    verb = "would" if data["dry_run"] else "did"
    counts = data["counts"]
    out.print(
        f"{verb}: expire {counts['expired']}, compact {counts['compacted']}, "
        f"evict {counts['evicted']}, purge {counts['purged']} page(s); "
        f"prune {counts['observations']} observation(s)",
        highlight=False,
    )
    for key in ("expired", "compacted", "evicted", "purged"):
        for page in data[key]:
            out.print(f"  {key}: {page['project']}:{page['path']}", highlight=False)
    for line in data["skipped"]:
        out.print(f"  skipped: {line}", highlight=False)


def lint(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Only this project (default: all).")
    ] = None,
    as_json: Json = False,
) -> None:
    """Check pages for dangling links, orphans, stale flags...; writes _lint/report.md."""
    body = _scope_body(workspace, project)
    data = client_for(load_config(data_dir), server).request(
        "POST", "/api/v1/lint", json=body, timeout=LONG_TIMEOUT_S
    )
    if as_json:
        emit_json(data)
        return
    for report in data["projects"]:
        findings = report["findings"]
        out.print(f"{report['project']}: {len(findings)} finding(s)", highlight=False)
        for f in findings:
            out.print(
                f"  {f['rule']} {f['path']}: {f['message']}; fix: {f['fix']}", highlight=False
            )


def checkpoints(
    path: Annotated[str, typer.Argument(help="Page path inside the project.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    as_json: Json = False,
) -> None:
    """List the git checkpoints that changed a page, newest first."""
    ref = scope_for(workspace, project).page(path)
    url = (
        f"/api/v1/projects/{quote(ref.workspace)}/{quote(ref.project)}"
        f"/checkpoints/{quote(ref.path)}"
    )
    data = client_for(load_config(data_dir), server).request("GET", url)
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    table = Table("rev", "at", "change", "message")
    for c in data["checkpoints"]:
        table.add_row(
            c["rev"][:12], c["at"], "removed" if c["deleted"] else "written", c["message"]
        )
    out.print(table)


def restore_page(
    path: Annotated[str, typer.Argument(help="Page path inside the project.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    rev: Annotated[
        str | None, typer.Option(help="Checkpoint to restore (default: the newest holding it).")
    ] = None,
) -> None:
    """Write a page back from a git checkpoint as a new version (brings back removed pages)."""
    ref = scope_for(workspace, project).page(path)
    body = {"workspace": ref.workspace, "project": ref.project, "path": ref.path, "rev": rev}
    data = client_for(load_config(data_dir), server).request(
        "POST", "/api/v1/restore-page", json=body
    )
    out.print(
        f"restored {data['path']} from {data['rev'][:12]} as version {data['version']} "
        f"(page_id {data['page_id']})",
        highlight=False,
    )


def commit(data_dir: DataDir = None, server: ServerUrl = None) -> None:
    """Force a git checkpoint of everything written so far."""
    data = client_for(load_config(data_dir), server).request("POST", "/api/v1/commit")
    out.print(f"{data['commits']} checkpoint(s) committed", highlight=False)
