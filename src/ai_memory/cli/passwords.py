"""``ai-memory user passwd NAME``: set or reset a user's password for the web UI.

Admins only (through the server's ``/admin`` routes, or in this process on a data
dir no server owns). The password is typed twice at a prompt that does not echo,
or read from standard input with ``--password-stdin`` (for scripts); it is never
an argument, so it stays out of shell history and process listings. Setting one
signs the user out of every browser; the first password also retires the token
sign-in of the web UI.
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from ai_memory.cli.admin_call import admin_call
from ai_memory.cli.options import DataDir, ServerUrl, load_config_owning
from ai_memory.cli.output import out
from ai_memory.core.errors import InvalidInput

PasswordStdin = Annotated[
    bool,
    typer.Option("--password-stdin", help="Read the password from standard input (one line)."),
]


def register(user_app: typer.Typer) -> None:
    user_app.command("passwd")(passwd)


def passwd(
    name: Annotated[str, typer.Argument(help="The user's name.")],
    password_stdin: PasswordStdin = False,
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Set a user's web sign-in password (admins only); their browsers are signed out."""
    require_user(name, data_dir, server)  # a typo's answer is "no such user", not a rule
    password = read_new_password(password_stdin)
    data = store_password(name, password, data_dir, server)
    ended = data["sessions_ended"]
    out.print(f"set the password of {name}" + (f"; {ended} web session(s) ended" if ended else ""))


def read_new_password(from_stdin: bool) -> str:
    """The new password, checked against the rules before anything is sent or stored."""
    from ai_memory.store.passwords import check_rules

    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    elif not sys.stdin.isatty():
        raise InvalidInput(
            "no terminal to type the password at; pass it on standard input with --password-stdin"
        )
    else:
        first = typer.prompt("New password", hide_input=True, err=True)
        again = typer.prompt("Again", hide_input=True, err=True)
        if first != again:
            raise InvalidInput("the two passwords differ; nothing changed")
        password = first
    check_rules(password)
    return password


def require_user(name: str, data_dir: DataDir, server: str | None) -> None:
    """Raise ``NotFound`` unless ``name`` is a user who may be given a password."""
    from ai_memory.cli.admin_call import reading
    from ai_memory.core.errors import NotFound
    from ai_memory.store import identity_admin

    identity_admin.validate_user_name(name)
    config = load_config_owning(data_dir)
    found = admin_call(config, server, "GET", "/admin/users", reading(identity_admin.list_users))
    if not any(user["name"] == name for user in found["users"]):
        raise NotFound(f"no user named {name!r} (see `ai-memory user list`)")


def store_password(
    name: str, password: str, data_dir: DataDir, server: str | None
) -> dict[str, Any]:
    from ai_memory.runtime import Runtime
    from ai_memory.store import identity_admin, passwords

    identity_admin.validate_user_name(name)

    def local(runtime: Runtime) -> dict[str, Any]:
        from ai_memory.core.clock import now_iso

        hashed = passwords.hash_password(password)
        now = now_iso()
        return runtime.writer.call(lambda conn: passwords.set_password(conn, name, hashed, now=now))

    config = load_config_owning(data_dir)
    path = f"/admin/users/{name}/password"
    return admin_call(config, server, "PUT", path, local, json={"password": password})
