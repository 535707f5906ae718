"""``write-page`` and ``delete-page``: the page writes of the command line, through the server."""

from __future__ import annotations

import sys
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
from ai_memory.cli.output import emit_json, out
from ai_memory.core.errors import InvalidInput
from ai_memory.core.kinds import Kind

PATH_HELP = "Page path inside the project, e.g. decisions/db.md"


def register(app: typer.Typer) -> None:
    @app.command("write-page")
    def write_page(
        path: Annotated[
            str, typer.Argument(help="Page path inside the project, e.g. decisions/db.md")
        ],
        data_dir: DataDir = None,
        server: ServerUrl = None,
        workspace: Workspace = None,
        project: Project = None,
        file: Annotated[
            Path | None, typer.Option("--file", "-f", help="Read the body from this file.")
        ] = None,
        title: Annotated[str | None, typer.Option(help="Page title.")] = None,
        kind: Annotated[Kind | None, typer.Option(help="Page kind.")] = None,
        tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag; repeatable.")] = None,
        pinned: Annotated[bool | None, typer.Option("--pinned/--not-pinned")] = None,
        expected_page_id: Annotated[
            int | None, typer.Option(help="Write only if the page is still at this version id.")
        ] = None,
        create_only: Annotated[
            bool, typer.Option(help="Write only if the page does not exist.")
        ] = False,
        as_json: Json = False,
    ) -> None:
        """Write a page; the body comes from --file or standard input."""
        raw = file.read_bytes() if file else sys.stdin.buffer.read()
        try:
            body = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInput(
                f"the page body is not UTF-8: {exc.reason} at byte {exc.start}"
            ) from exc
        payload: dict[str, Any] = {"body": body, "create_only": create_only}
        for key, value in (
            ("title", title),
            ("kind", kind),
            ("tags", tag),
            ("pinned", pinned),
            ("expected_page_id", expected_page_id),
        ):
            if value is not None:
                payload[key] = value
        ref = scope_for(workspace, project).page(path)
        result = client_for(load_config(data_dir), server).write_page(ref, payload)
        if as_json:
            emit_json(result)
        elif result["changed"]:
            out.print(
                f"wrote {result['path']} (page_id {result['page_id']}, version {result['version']})"
            )
        else:
            out.print(f"{result['path']} unchanged (page_id {result['page_id']})")

    @app.command("delete-page")
    def delete_page(
        path: Annotated[str, typer.Argument(help="Page path inside the project.")],
        data_dir: DataDir = None,
        server: ServerUrl = None,
        workspace: Workspace = None,
        project: Project = None,
        expected_page_id: Annotated[
            int | None, typer.Option(help="Delete only if the page is still at this version id.")
        ] = None,
    ) -> None:
        """Delete a page (its history stays readable)."""
        ref = scope_for(workspace, project).page(path)
        result = client_for(load_config(data_dir), server).delete_page(ref, expected_page_id)
        out.print(f"deleted {result['path']} (was page_id {result['page_id']})")
