"""Administering users, keys and project access: one function per operation, JSON out.

The admin HTTP routes and the in-process CLI run the same functions (the changing
ones as writer commands), so both check names the same way, refuse the same
things with the same messages, and write the same audit row. The acting user the
audit row names comes from ``store.acting``; no row or message holds a key.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from ai_memory.core.apikeys import KEY_PATTERN, KEY_START
from ai_memory.core.errors import Conflict, InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import GRANTS, ROOT_NAME, VISIBILITIES, operator_owned
from ai_memory.store import identity, pages, project_access

ACTOR = "admin"
USER_NAME = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
PREFIX = re.compile(r"[a-z0-9]{10}")
MAX_LABEL = 100
PREFIX_HELP = "a key prefix is the 10 lowercase letters or digits after aim_ (see api-key list)"


def validate_user_name(name: str) -> str:
    """1-64 characters of a-z, 0-9, '.', '_', '-', starting with a letter or digit."""
    if name == ROOT_NAME:
        raise InvalidInput("the user name 'root' is reserved for the operator's token")
    if not USER_NAME.fullmatch(name):
        shown = name if len(name) <= 64 else name[:64] + "…"
        raise InvalidInput(
            f"invalid user name {shown!r}: use 1-64 characters of a-z, 0-9, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return name


def key_prefix(given: str) -> str:
    """The prefix of ``given``: a bare prefix, ``aim_<prefix>``, or a whole key.

    The message never repeats what was given: it may be a key.
    """
    whole = KEY_PATTERN.fullmatch(given)
    if whole:
        return whole.group(1)
    bare = given.removeprefix(KEY_START)
    if PREFIX.fullmatch(bare):
        return bare
    raise InvalidInput(f"not a key prefix: {PREFIX_HELP}")


def _label(label: str) -> str:
    if len(label) > MAX_LABEL or not label.isprintable():
        raise InvalidInput(f"a key label is at most {MAX_LABEL} printable characters")
    return label


def existing_user(conn: sqlite3.Connection, name: str) -> sqlite3.Row:
    """The user ``name``, refusing an unknown or removed one by name."""
    row = identity.user_row(conn, validate_user_name(name))
    if row is None or row["removed_at"] is not None:
        raise NotFound(f"no user named {name!r} (see `ai-memory user list`)")
    return row


def _audit(conn: sqlite3.Connection, now: str, action: str, **detail: Any) -> None:
    pages.audit(conn, now=now, actor=ACTOR, action=action, detail=detail)


def user_json(row: sqlite3.Row) -> dict[str, Any]:
    state = "removed" if row["removed_at"] else "disabled" if row["disabled_at"] else "active"
    found = {
        "name": row["name"],
        "admin": bool(row["admin"]),
        "state": state,
        "created_at": row["created_at"],
        "disabled_at": row["disabled_at"],
    }
    if "active_keys" in row.keys():  # noqa: SIM118 - sqlite3.Row has no __contains__ for names
        found["active_keys"] = int(row["active_keys"])
    return found


def key_json(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "prefix": row["prefix"],
        "user": row["user"],
        "label": row["label"],
        "created_at": row["created_at"],
        "last_used_at": row["last_used_at"],
        "revoked_at": row["revoked_at"],
    }


# -- users --------------------------------------------------------------------------


def add_user(conn: sqlite3.Connection, name: str, *, admin: bool, now: str) -> dict[str, Any]:
    existing = identity.user_row(conn, validate_user_name(name))
    if existing is not None and existing["removed_at"] is not None:
        raise Conflict(f"user {name!r} was removed; a removed user's name is not reused")
    if existing is not None:
        raise Conflict(f"a user named {name!r} already exists")
    identity.create_user(conn, name, admin=admin, now=now)
    _audit(conn, now, "user-add", user=name, admin=admin)
    return {"user": user_json(existing_user(conn, name))}


def list_users(conn: sqlite3.Connection) -> dict[str, Any]:
    return {"users": [user_json(row) for row in identity.users(conn)]}


def set_enabled(conn: sqlite3.Connection, name: str, *, enabled: bool, now: str) -> dict[str, Any]:
    """Disable or enable a user: a disabled user's keys are refused from the next request."""
    row = existing_user(conn, name)
    changed = (row["disabled_at"] is None) != enabled
    if changed:
        identity.set_disabled(conn, int(row["id"]), None if enabled else now)
        _audit(conn, now, "user-enable" if enabled else "user-disable", user=name)
    return {"user": user_json(existing_user(conn, name)), "changed": changed}


def remove_user(conn: sqlite3.Connection, name: str, *, now: str) -> dict[str, Any]:
    """Revoke the user's keys, drop their grants and web sessions; keep what they own."""
    row = existing_user(conn, name)
    revoked, grants = identity.remove_user(conn, int(row["id"]), now)
    _audit(conn, now, "user-remove", user=name, keys_revoked=revoked, grants_dropped=grants)
    return {"user": name, "removed": True, "keys_revoked": revoked, "grants_dropped": grants}


# -- keys ---------------------------------------------------------------------------


def create_key(conn: sqlite3.Connection, user: str, *, label: str, now: str) -> dict[str, Any]:
    """A new key; the answer carries it whole, the one time it is ever shown."""
    row = existing_user(conn, user)
    if row["disabled_at"] is not None:
        raise Conflict(f"user {user!r} is disabled; enable them before creating a key")
    _, key = identity.create_key(conn, int(row["id"]), label=_label(label), now=now)
    _audit(conn, now, "api-key-create", user=user, prefix=key.prefix, label=label)
    found = identity.key_row(conn, key.prefix)
    assert found is not None
    return {"key": key.full, **key_json(found)}


def list_keys(conn: sqlite3.Connection, user: str | None) -> dict[str, Any]:
    user_id = int(existing_user(conn, user)["id"]) if user is not None else None
    return {"keys": [key_json(row) for row in identity.keys(conn, user_id)]}


def revoke_key(conn: sqlite3.Connection, prefix: str, *, now: str) -> dict[str, Any]:
    row = identity.key_row(conn, key_prefix(prefix))
    if row is None:
        raise NotFound("no key with that prefix (see `ai-memory api-key list`)")
    changed = identity.revoke_key(conn, int(row["id"]), now)
    if changed:
        _audit(conn, now, "api-key-revoke", user=row["user"], prefix=row["prefix"])
    found = identity.key_row(conn, row["prefix"])
    assert found is not None
    return {"key": key_json(found), "changed": changed}


# -- project access -----------------------------------------------------------------


def _rule(conn: sqlite3.Connection, scope: Scope) -> sqlite3.Row:
    row = project_access.rule_row(conn, scope)
    if row is None:
        raise NotFound(f"no project {scope} (see `ai-memory list-projects`)")
    return row


def project_rule(conn: sqlite3.Connection, scope: Scope) -> dict[str, Any]:
    """The project's visibility, creator and grants."""
    row = _rule(conn, scope)
    by_user = row["created_by"] is not None and not operator_owned(scope.project)
    creator = row["creator"] if by_user else ROOT_NAME  # _global is the operator's
    grants = [
        {"user": g["user"], "access": g["access"], "granted_at": g["granted_at"]}
        for g in project_access.grant_rows(conn, scope)
    ]
    return {
        "workspace": scope.workspace,
        "project": scope.project,
        "visibility": row["visibility"],
        "created_by": creator,
        "grants": grants,
    }


def set_visibility(
    conn: sqlite3.Connection, scope: Scope, visibility: str, *, now: str
) -> dict[str, Any]:
    if visibility not in VISIBILITIES:
        raise InvalidInput(f"visibility must be one of {', '.join(VISIBILITIES)}")
    if _rule(conn, scope)["visibility"] != visibility:
        project_access.set_visibility(conn, scope, visibility)
        _audit(conn, now, "project-visibility", project=str(scope), visibility=visibility)
    return project_rule(conn, scope)


def grant(
    conn: sqlite3.Connection, scope: Scope, user: str, access: str, *, now: str
) -> dict[str, Any]:
    if access not in GRANTS:
        raise InvalidInput(f"access must be one of {', '.join(GRANTS)}")
    _rule(conn, scope)
    project_access.set_grant(conn, scope, int(existing_user(conn, user)["id"]), access, now)
    _audit(conn, now, "project-grant", project=str(scope), user=user, access=access)
    return project_rule(conn, scope)


def revoke_grant(conn: sqlite3.Connection, scope: Scope, user: str, *, now: str) -> dict[str, Any]:
    _rule(conn, scope)
    if not project_access.drop_grant(conn, scope, int(existing_user(conn, user)["id"])):
        raise NotFound(f"user {user!r} has no grant on {scope}")
    _audit(conn, now, "project-revoke", project=str(scope), user=user)
    return project_rule(conn, scope)
