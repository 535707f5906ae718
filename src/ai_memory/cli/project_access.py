"""``ai-memory project access|grant|revoke``: who may read and write one project.

An ``open`` project is read and written by every signed-in user; a ``restricted``
one by admins, its creator and the users granted ``read`` or ``write``. The
commands go through the server that owns the data, else run in this process.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ai_memory.cli.admin_call import admin_call, changing, reading
from ai_memory.cli.options import DataDir, Json, ServerUrl, load_config_owning
from ai_memory.cli.output import emit_json, out
from ai_memory.core.identity import GLOBAL_PROJECT

if TYPE_CHECKING:
    from ai_memory.core.identity import Scope

project_app = typer.Typer(help="Show and change who may use a project.", no_args_is_help=True)
Target = Annotated[str, typer.Argument(help="WORKSPACE/PROJECT, or PROJECT in 'default'.")]
User = Annotated[str, typer.Option("--user", "-u", help="The user's name.")]


class Visibility(StrEnum):
    open = "open"
    restricted = "restricted"


class Grant(StrEnum):
    read = "read"
    write = "write"


def register(app: typer.Typer) -> None:
    app.add_typer(project_app, name="project")


def _scope(target: str) -> Scope:
    from ai_memory.core.identity import Scope

    workspace, _, project = target.rpartition("/")
    return Scope.of(workspace or None, project)


def _url(scope: Scope, tail: str) -> str:
    return f"/admin/projects/{scope.workspace}/{scope.project}/{tail}"


@project_app.command("access")
def access(
    target: Target,
    visibility: Annotated[
        Visibility | None, typer.Option("--visibility", help="Make the project open or restricted.")
    ] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Show a project's rule (visibility, creator, grants), or set its visibility."""
    from ai_memory.store import identity_admin as ops

    scope = _scope(target)
    config = load_config_owning(data_dir)
    if visibility is None:
        local = reading(lambda conn: ops.project_rule(conn, scope))
        data = admin_call(config, server, "GET", _url(scope, "access"), local)
    else:
        chosen = visibility.value
        local = changing(lambda conn, now: ops.set_visibility(conn, scope, chosen, now=now))
        body = {"visibility": chosen}
        data = admin_call(config, server, "PUT", _url(scope, "access"), local, json=body)
    show(data, as_json)


@project_app.command("grant")
def grant(
    target: Target,
    user: User,
    level: Annotated[Grant, typer.Option("--access", help="What the user may do.")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Let a user read, or read and write, a restricted project."""
    from ai_memory.store import identity_admin as ops

    scope, chosen = _scope(target), level.value
    ops.validate_user_name(user)
    local = changing(lambda conn, now: ops.grant(conn, scope, user, chosen, now=now))
    url = _url(scope, f"grants/{user}")
    data = admin_call(
        load_config_owning(data_dir), server, "PUT", url, local, json={"access": chosen}
    )
    show(data, as_json)


@project_app.command("revoke")
def revoke(
    target: Target,
    user: User,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Take a user's grant on a project away."""
    from ai_memory.store import identity_admin as ops

    scope = _scope(target)
    ops.validate_user_name(user)
    local = changing(lambda conn, now: ops.revoke_grant(conn, scope, user, now=now))
    data = admin_call(
        load_config_owning(data_dir), server, "DELETE", _url(scope, f"grants/{user}"), local
    )
    show(data, as_json)


def show(data: dict[str, Any], as_json: bool) -> None:
    if as_json:
        emit_json(data)
        return
    scope = f"{data['workspace']}/{data['project']}"
    out.print(f"{scope}: {data['visibility']}, created by {data['created_by']}")
    if data["visibility"] == "open" and data["project"] == GLOBAL_PROJECT:
        out.print("every signed-in user may read it; admins and write grants may write it")
    elif data["visibility"] == "open":
        out.print("every signed-in user may read and write it", end="")
        out.print("; grants apply once it is restricted" if data["grants"] else "")
    for row in data["grants"]:
        out.print(f"  {row['user']}: {row['access']}")
    if data["visibility"] == "restricted" and not data["grants"]:
        out.print("  no grants: only admins and its creator may use it")
