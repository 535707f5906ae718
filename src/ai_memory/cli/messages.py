"""``ai-memory message send/list/pop/cancel``: cross-project messages from a shell.

Thin HTTP clients of ``/api/v1/messages``: the server authorises both ends and owns the
queue. The calling project is the checkout's (or ``--workspace``/``--project``); a
popped message is printed inside the untrusted-history fence, since its text came from
another project.
"""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
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
from ai_memory.cli.output import emit_json, keep_whole, out

KINDS = "claude-code, codex, gemini, cursor, opencode, generic"
group = typer.Typer(
    name="message",
    help="Cross-project messages: send to another project, list, pop (claim once), cancel.",
    no_args_is_help=True,
)


class Box(StrEnum):
    inbox = "inbox"
    outbox = "outbox"
    both = "both"


class Status(StrEnum):
    queued = "queued"
    claimed = "claimed"
    cancelled = "cancelled"
    any = "any"


def register(app: typer.Typer) -> None:
    app.add_typer(group)


@group.command("send")
def send(
    to_project: Annotated[str, typer.Argument(help="The recipient project (it must exist).")],
    subject: Annotated[str, typer.Option("--subject", "-s", help="One line, up to 200 chars.")],
    body: Annotated[
        str | None, typer.Option("--body", "-b", help="The text (default: read from stdin).")
    ] = None,
    to_workspace: Annotated[
        str | None, typer.Option("--to-workspace", help="The recipient's workspace.")
    ] = None,
    to_agent: Annotated[
        str | None, typer.Option("--to-agent", help=f"Only this agent kind may pop it: {KINDS}.")
    ] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    as_json: Json = False,
) -> None:
    """Send a message from this project to another one's inbox."""
    payload: dict[str, Any] = {
        **_here(workspace, project),
        "to_workspace": to_workspace,
        "to_project": to_project,
        "to_agent": to_agent,
        "subject": subject,
        "body": sys.stdin.read() if body is None else body,
    }
    data = _ask(data_dir, server, "POST", "/api/v1/messages", as_json, json=payload)
    if data is None:
        return
    message = data["message"]
    to = message["to"]
    out.print(
        f"sent message {message['id']} to {to['workspace']}/{to['project']}"
        + (f" (for {message['to_agent']})" if message["to_agent"] else ""),
        highlight=False,
    )


@group.command("list")
def list_messages(
    box: Annotated[Box, typer.Option("--box", help="Inbox, outbox or both.")] = Box.inbox,
    status: Annotated[Status, typer.Option("--status", help="Which messages.")] = Status.queued,
    limit: Annotated[int, typer.Option(min=1, max=100)] = 20,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    as_json: Json = False,
) -> None:
    """List this project's messages without claiming any, newest first."""
    params = {**_here(workspace, project), "box": box.value, "status": status.value, "limit": limit}
    data = _ask(data_dir, server, "GET", "/api/v1/messages", as_json, params=params)
    if data is None:
        return
    from rich.table import Table

    for name in ("inbox", "outbox"):
        if name not in data:
            continue
        rows = data[name]
        if not rows:
            out.print(f"{name}: no {status.value if status != Status.any else ''} messages")
            continue
        other = "from" if name == "inbox" else "to"
        table = Table("id", "status", other, "for", "sender", "sent at", "subject", title=name)
        for row in rows:
            end = row[other]
            table.add_row(
                str(row["id"]),
                row["status"],
                f"{end['workspace']}/{end['project']}",
                row["to_agent"] or "any",
                row["sender"],
                row["created_at"][:16],
                row["subject"],
            )
        out.print(keep_whole(table, "subject"))


@group.command("pop")
def pop(
    agent: Annotated[
        str | None, typer.Option("--agent", help=f"Your agent kind, for addressed ones: {KINDS}.")
    ] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
    as_json: Json = False,
) -> None:
    """Claim the oldest queued message of this project and print it (once: it is claimed)."""
    from ai_memory.messages.view import fenced

    here = _here(workspace, project)
    data = _ask(
        data_dir, server, "POST", "/api/v1/messages/pop", as_json, json={**here, "agent": agent}
    )
    if data is None:
        return
    message = data["message"]
    if message is None:
        out.print(f"no queued message for {here['workspace']}/{here['project']}")
        raise typer.Exit(0)
    out.print(fenced(message), highlight=False, markup=False)


@group.command("cancel")
def cancel(
    message_id: Annotated[int, typer.Argument(min=1, help="The message's id.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Withdraw a message you sent that is still queued."""
    url = f"/api/v1/messages/{message_id}/cancel"
    if _ask(data_dir, server, "POST", url, as_json) is None:
        return
    out.print(f"cancelled message {message_id}")


def _here(workspace: str | None, project: str | None) -> dict[str, str]:
    """The calling project: the options, else the checkout's."""
    scope = scope_for(workspace, project)
    return {"workspace": scope.workspace, "project": scope.project}


def _ask(
    data_dir: Path | None, server: str | None, method: str, url: str, as_json: bool, **kw: Any
) -> dict[str, Any] | None:
    """One request to the server; with ``--json`` the answer is printed and None returned."""
    data: dict[str, Any] = client_for(load_config(data_dir), server).request(method, url, **kw)
    if as_json:
        emit_json(data)
        return None
    return data
