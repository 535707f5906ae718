"""``ai-memory`` commands. Client commands speak HTTP; lifecycle commands act on disk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ai_memory.cli import backfill as backfill_commands
from ai_memory.cli import completion as completion_commands
from ai_memory.cli import consolidate as consolidate_commands
from ai_memory.cli import doctor as doctor_commands
from ai_memory.cli import hooks as hook_commands
from ai_memory.cli import hygiene as hygiene_commands
from ai_memory.cli import hygiene_projects as hygiene_project_commands
from ai_memory.cli import lifecycle as lifecycle_commands
from ai_memory.cli import llm_test as llm_test_commands
from ai_memory.cli import login as login_commands
from ai_memory.cli import mcp as mcp_commands
from ai_memory.cli import messages as message_commands
from ai_memory.cli import page_writes as page_write_commands
from ai_memory.cli import passwords as password_commands
from ai_memory.cli import pending_writes as pending_commands
from ai_memory.cli import project_access as project_access_commands
from ai_memory.cli import search as search_commands
from ai_memory.cli import serve as serve_commands
from ai_memory.cli import service as service_commands
from ai_memory.cli import users as user_commands
from ai_memory.cli.options import (
    DataDir,
    Json,
    Project,
    ServerUrl,
    Workspace,
    client_for,
    load_config,
    load_config_owning,
    scope_for,
)
from ai_memory.cli.output import emit_json, err, keep_whole, out, styled, write_text
from ai_memory.core.errors import AiMemoryError

app = typer.Typer(
    name="ai-memory",
    help="Long-term memory shared by coding agents: a git-versioned markdown wiki "
    "with a SQLite index for search.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
doctor_commands.register(app)
completion_commands.register(app)
hook_commands.register(app)
mcp_commands.register(app)
search_commands.register(app)
lifecycle_commands.register(app)
service_commands.register(app)
hygiene_commands.register(app)
llm_test_commands.register(app)
hygiene_project_commands.register(app)
pending_commands.register(app)
backfill_commands.register(app)
consolidate_commands.register(app)
message_commands.register(app)
user_commands.register(app)
password_commands.register(user_commands.user_app)
project_access_commands.register(app)
login_commands.register(app)


def run_app() -> None:
    """Run the CLI; typed errors become one red line and exit status 1, never a traceback."""
    from ai_memory.cli.options import quiet_flags

    try:
        quiet_flags(typer.main.get_command(app))(prog_name="ai-memory")
    except AiMemoryError as exc:
        err.print(styled("error:", "red"), exc.message)
        sys.exit(1)


# -- lifecycle ------------------------------------------------------------------


@app.command()
def init(data_dir: DataDir = None) -> None:
    """Create the data dir: config, token, wiki repository and database."""
    from ai_memory.maintenance.init import initialise

    config = load_config_owning(data_dir)
    created = initialise(config)
    if not created:
        out.print(f"{config.data_dir} is already initialised; nothing changed.")
        return
    for line in created:
        out.print(f"created {line}")
    out.print(styled("initialised", "green"), str(config.data_dir))


app.command("serve")(serve_commands.serve)  # listed after init, as it runs after it


@app.command()
def reindex(data_dir: DataDir = None) -> None:
    """Rebuild the index from the markdown files (refused while a server runs)."""
    from ai_memory.cli.rebuild import reindex as run_reindex

    run_reindex(data_dir)


@app.command()
def backup(
    to: Annotated[Path, typer.Option("--to", help="Archive to write (FILE.tar.gz).")],
    data_dir: DataDir = None,
) -> None:
    """Back up the database and the wiki; safe while the server runs."""
    from ai_memory.maintenance.backup import backup as make_backup

    target = make_backup(load_config_owning(data_dir), to)
    out.print(f"backup written to {target}")


@app.command()
def restore(
    source: Annotated[Path, typer.Option("--from", help="Backup archive to restore.")],
    data_dir: DataDir = None,
) -> None:
    """Replace the database and wiki with a backup's (refused while a server runs)."""
    from ai_memory.maintenance.backup import restore as do_restore

    aside = do_restore(load_config_owning(data_dir), source)
    out.print(f"restored from {source}; the previous data is kept in {aside}")


# -- client commands --------------------------------------------------------------


@app.command()
def status(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    as_json: Json = False,
) -> None:
    """Show what the server holds, overall and for the current project, and what is installed.

    An admin (or the operator's token) sees every count and the server's health; a user's
    key sees the counts of what that user may read (their own sessions, the projects they
    may read), without the health. With no server answering it reads the local index.
    """
    from ai_memory.service.check import install_check
    from ai_memory.service.spec import Host

    config = load_config(data_dir)
    installed = install_check(config.data_dir, config.db_path, Host.current())
    from ai_memory.cli import status_view

    if not as_json:  # printed first: it is as useful when the server is down
        summary = status_view.install_summary(installed, config)
        out.print(summary, markup=False, highlight=False, soft_wrap=True)
    scope = scope_for(workspace, project)
    from ai_memory.core.errors import Unavailable

    client = client_for(config, server)
    try:
        data, health = status_view.served_status(client, scope)
    except Unavailable as exc:  # no server: the same counts, read-only, from the index
        err.print(styled("note:", "yellow"), f"{exc.message}; reading the index read-only")
        data, health = status_view.local_status(config, scope), None
    if as_json:
        emit_json({**data, "health": health, "install": installed.to_dict()})
        return
    from rich.table import Table

    where = data.get("data_dir") or client.base_url  # a user is not shown the server's disk
    table = Table(title=f"ai-memory {data['version']} — {where}")
    table.add_column("what")
    table.add_column("all", justify="right")
    table.add_column(str(scope), justify="right")
    per_project = data.get("project", {})
    for key in (
        "projects",
        "pages",
        "versions",
        "links",
        "sessions",
        "observations",
        "open_handoffs",
    ):
        table.add_row(key, str(data.get(key, "")), str(per_project.get(key, "")))
    out.print(table)
    if health is not None:
        status_view.show_health(health)


@app.command("list-projects")
def list_projects(
    data_dir: DataDir = None, server: ServerUrl = None, as_json: Json = False
) -> None:
    """List every project with its page count."""
    data = client_for(load_config(data_dir), server).projects()
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    table = Table("workspace", "project", "pages", "remote")
    for row in data["projects"]:
        table.add_row(row["workspace"], row["name"], str(row["pages"]), row["remote"] or "")
    out.print(keep_whole(table, "remote"))


@app.command("list-pages")
def list_pages(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
    as_json: Json = False,
) -> None:
    """List the project's most recently written pages."""
    scope = scope_for(workspace, project)
    data = client_for(load_config(data_dir), server).recent(scope, limit)
    if as_json:
        emit_json({"workspace": scope.workspace, "project": scope.project, **data})
        return
    from rich.table import Table

    table = Table("page_id", "path", "title", "kind", "updated", title=f"{scope}: newest pages")
    for page in data["pages"]:
        table.add_row(
            str(page["page_id"]),
            page["path"],
            page["title"],
            page["kind"],
            page["created_at"][:16].replace("T", " "),
        )
    out.print(keep_whole(table, "path"))
    if not data["pages"]:
        out.print(f"no pages in {scope}")


@app.command("read-page")
def read_page(
    path: Annotated[str, typer.Argument(help="Page path inside the project, e.g. decisions/db.md")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    version: Annotated[int | None, typer.Option(min=1, help="An older version.")] = None,
    as_json: Json = False,
) -> None:
    """Print a page (latest version unless --version)."""
    from ai_memory.cli.local_read import or_local, page_local

    ref = scope_for(workspace, project).page(path)
    config = load_config(data_dir)
    page = or_local(
        config,
        lambda: client_for(config, server).read_page(ref, version),
        lambda conn: page_local(conn, ref, version),
    )
    if as_json:
        emit_json(page)
        return
    out.print(
        styled(page["title"], "bold"),
        f"({page['kind']}, page_id {page['page_id']}, version {page['version']})",
        sep="  ",
    )
    if page.get("frontmatter_error"):
        err.print(styled("warning:", "yellow"), page["frontmatter_error"])
    write_text(page["body"])


@app.command()
def history(
    path: Annotated[str, typer.Argument(help="Page path inside the project.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    as_json: Json = False,
) -> None:
    """List every version of a page."""
    from ai_memory.cli.local_read import history_local, or_local

    ref = scope_for(workspace, project).page(path)
    config = load_config(data_dir)
    data = or_local(
        config,
        lambda: client_for(config, server).history(ref),
        lambda conn: history_local(conn, ref),
    )
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    table = Table("version", "page_id", "title", "written", "by", "state")
    for v in data["versions"]:
        state = "deleted" if v["deleted_at"] else "latest" if v["is_latest"] else ""
        table.add_row(
            str(v["version"]), str(v["page_id"]), v["title"], v["created_at"], v["actor"], state
        )
    out.print(table)


page_write_commands.register(app)  # last, so --help lists them after the reads
