"""``ai-memory user …`` and ``ai-memory api-key …``: the people who share a server.

Each command asks the server that owns the data (``/admin/users``,
``/admin/api-keys``) or, with none running, changes the data dir in this process
(see cli/admin_call.py). A key is printed once, when it is created, and never again.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from ai_memory.cli.admin_call import admin_call, changing, reading
from ai_memory.cli.options import DataDir, Json, ServerUrl, load_config_owning
from ai_memory.cli.output import emit_json, err, out
from ai_memory.cli.passwords import PasswordStdin

user_app = typer.Typer(help="Add, list, disable, enable and remove users.", no_args_is_help=True)
key_app = typer.Typer(help="Create, list and revoke users' API keys.", no_args_is_help=True)
UserName = Annotated[str, typer.Argument(help="The user's name.")]


def register(app: typer.Typer) -> None:
    app.add_typer(user_app, name="user")
    app.add_typer(key_app, name="api-key")


def _call(
    data_dir: DataDir, server: str | None, method: str, path: str, local: Any, **kw: Any
) -> dict[str, Any]:
    return admin_call(load_config_owning(data_dir), server, method, path, local, **kw)


@user_app.command("add")
def user_add(
    name: UserName,
    admin: Annotated[bool, typer.Option("--admin", help="May administer everything.")] = False,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
    password_stdin: PasswordStdin = False,
) -> None:
    """Add a user (1-64 characters: a-z, 0-9, '.', '_', '-'; 'root' is reserved)."""
    from ai_memory.cli.passwords import read_new_password, store_password
    from ai_memory.store import identity_admin as ops

    ops.validate_user_name(name)
    password = read_new_password(from_stdin=True) if password_stdin else None
    local = changing(lambda conn, now: ops.add_user(conn, name, admin=admin, now=now))
    data = _call(
        data_dir, server, "POST", "/admin/users", local, json={"name": name, "admin": admin}
    )
    if password is not None:
        store_password(name, password, data_dir, server)
    if as_json:
        emit_json(data)
        return
    role = "admin" if admin else "user"
    out.print(f"added {role} {name}")
    err.print(f"next: ai-memory api-key create --user {name}")


@user_app.command("list")
def user_list(data_dir: DataDir = None, server: ServerUrl = None, as_json: Json = False) -> None:
    """List the users, with how many keys each may use."""
    from ai_memory.store import identity_admin as ops

    data = _call(data_dir, server, "GET", "/admin/users", reading(ops.list_users))
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    table = Table("name", "role", "state", "keys", "created")
    for user in data["users"]:
        role = "admin" if user["admin"] else "user"
        created = user["created_at"][:16].replace("T", " ")
        table.add_row(user["name"], role, user["state"], str(user["active_keys"]), created)
    out.print(table)
    if not data["users"]:
        out.print("no users yet; only the root token signs in (ai-memory user add NAME)")


def _set_enabled(name: str, enabled: bool, data_dir: DataDir, server: str | None) -> None:
    from ai_memory.store import identity_admin as ops

    ops.validate_user_name(name)
    verb = "enable" if enabled else "disable"
    local = changing(lambda conn, now: ops.set_enabled(conn, name, enabled=enabled, now=now))
    data = _call(data_dir, server, "POST", f"/admin/users/{name}/{verb}", local)
    done = f"{verb}d {name}" if data["changed"] else f"{name} was already {verb}d"
    out.print(done)


@user_app.command("disable")
def user_disable(name: UserName, data_dir: DataDir = None, server: ServerUrl = None) -> None:
    """Disable a user: their keys are refused from the next request; nothing is deleted."""
    _set_enabled(name, False, data_dir, server)


@user_app.command("enable")
def user_enable(name: UserName, data_dir: DataDir = None, server: ServerUrl = None) -> None:
    """Enable a disabled user again: their keys that were not revoked work again."""
    _set_enabled(name, True, data_dir, server)


@user_app.command("remove")
def user_remove(
    name: UserName, data_dir: DataDir = None, server: ServerUrl = None, as_json: Json = False
) -> None:
    """Remove a user: revoke their keys, drop their grants and web sessions.

    The sessions, observations, handoffs and projects they own are kept (an admin
    still sees them); the name is not given to anyone else.
    """
    from ai_memory.store import identity_admin as ops

    ops.validate_user_name(name)
    local = changing(lambda conn, now: ops.remove_user(conn, name, now=now))
    data = _call(data_dir, server, "DELETE", f"/admin/users/{name}", local)
    if as_json:
        emit_json(data)
        return
    out.print(
        f"removed {name}: {data['keys_revoked']} key(s) revoked, "
        f"{data['grants_dropped']} grant(s) dropped; what they own is kept"
    )


@key_app.command("create")
def key_create(
    user: Annotated[str, typer.Option("--user", "-u", help="Whose key it is.")],
    label: Annotated[str, typer.Option("--label", help="What it is for (e.g. laptop).")] = "",
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Create an API key for a user and print it, the only time it is shown."""
    from ai_memory.store import identity_admin as ops

    local = changing(lambda conn, now: ops.create_key(conn, user, label=label, now=now))
    body = {"user": user, "label": label}
    data = _call(data_dir, server, "POST", "/admin/api-keys", local, json=body)
    if as_json:
        emit_json(data)
        return
    out.print(data["key"])
    err.print(
        f"this is {user}'s key {data['prefix']}; it is shown once and stored only as a hash.\n"
        "On their machine: ai-memory login --server URL --key-stdin  (paste it on stdin);\n"
        "or send it as the header  Authorization: Bearer <key>."
    )


@key_app.command("list")
def key_list(
    user: Annotated[str | None, typer.Option("--user", "-u", help="Only this user's.")] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """List API keys by prefix: label, created, last used, revoked (never the key itself)."""
    from ai_memory.store import identity_admin as ops

    params = {"user": user} if user else None
    local = reading(lambda conn: ops.list_keys(conn, user))
    data = _call(data_dir, server, "GET", "/admin/api-keys", local, params=params)
    if as_json:
        emit_json(data)
        return
    from rich.table import Table

    table = Table("prefix", "user", "label", "created", "last used", "revoked")
    for key in data["keys"]:
        table.add_row(
            key["prefix"],
            key["user"],
            key["label"],
            _minute(key["created_at"]),
            _minute(key["last_used_at"]) or "never",
            _minute(key["revoked_at"]),
        )
    out.print(table)
    if not data["keys"]:
        out.print("no keys")


@key_app.command("revoke")
def key_revoke(
    prefix: Annotated[str, typer.Argument(help="The key's prefix (see api-key list).")],
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Revoke a key: it is refused from the next request on."""
    from ai_memory.store import identity_admin as ops

    bare = ops.key_prefix(prefix)  # a whole key pasted here never travels to the server
    local = changing(lambda conn, now: ops.revoke_key(conn, bare, now=now))
    data = _call(data_dir, server, "POST", f"/admin/api-keys/{bare}/revoke", local)
    who = data["key"]["user"]
    out.print(f"revoked {who}'s key {bare}" if data["changed"] else f"{bare} was already revoked")


def _minute(stamp: str | None) -> str:
    return stamp[:16].replace("T", " ") if stamp else ""
