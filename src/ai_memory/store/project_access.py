"""Reading a project's access rule and grants (migration 16)."""

from __future__ import annotations

import json
import sqlite3

from ai_memory.core.errors import Forbidden
from ai_memory.core.identity import Scope
from ai_memory.core.principal import (
    OPEN,
    Access,
    Principal,
    ProjectPolicy,
    access_to,
    operator_owned,
)

POLICY = "SELECT visibility, created_by FROM projects WHERE workspace = ? AND name = ?"
GRANTS = "SELECT user_id, access FROM project_grants WHERE workspace = ? AND project = ?"
# Restricted projects are few; reading them all is how search learns what to leave out.
RESTRICTED = """
SELECT p.workspace, p.name, p.created_by, g.access
FROM projects p
LEFT JOIN project_grants g ON g.workspace = p.workspace AND g.project = p.name AND g.user_id = ?
WHERE p.visibility = 'restricted'
"""
# An old name of a renamed, moved or merged project that no project holds now: the hooks
# still lead it to its target, so a user may not create a project under it.
LIVE_ALIAS = """
SELECT 1 FROM project_aliases a WHERE a.workspace = ? AND a.name = ?
    AND NOT EXISTS (SELECT 1 FROM projects p WHERE p.workspace = a.workspace AND p.name = a.name)
"""


def policy(conn: sqlite3.Connection, scope: Scope) -> ProjectPolicy:
    """A project's rule; a project that does not exist yet is open (its creator decides).

    ``_global`` is the operator's whoever created it: its grants count even while it is
    open, and no user is its creator."""
    operator = operator_owned(scope.project)
    row = conn.execute(POLICY, (scope.workspace, scope.project)).fetchone()
    restricted = row is not None and row["visibility"] == "restricted"
    if not restricted and not operator:
        return OPEN
    grants = {
        int(g["user_id"]): Access.of(g["access"])
        for g in conn.execute(GRANTS, (scope.workspace, scope.project))
    }
    creator = None if operator or row is None else row["created_by"]
    created_by = int(creator) if creator is not None else None
    visibility = "restricted" if restricted else "open"
    return ProjectPolicy(visibility, created_by, grants, operator_owned=operator)


def access(conn: sqlite3.Connection, principal: Principal, scope: Scope) -> Access:
    if principal.admin:  # no read at all on the operator's path
        return Access.WRITE
    return access_to(principal, policy(conn, scope))


def hidden_projects(conn: sqlite3.Connection, principal: Principal) -> frozenset[Scope]:
    """The projects ``principal`` may not read: empty for the operator and admins."""
    if principal.admin:
        return frozenset()
    hidden = set()
    for row in conn.execute(RESTRICTED, (principal.user_id,)):
        if row["access"] is not None:
            continue
        if row["created_by"] == principal.user_id and not operator_owned(row["name"]):
            continue
        hidden.add(Scope(row["workspace"], row["name"]))
    return frozenset(hidden)


def authorize(
    conn: sqlite3.Connection,
    principal: Principal,
    scope: Scope,
    need: Access,
    *,
    asked: Scope | None = None,
) -> None:
    """The one check every route, tool and search runs before it reads a project's rows.

    ``asked`` is the name the caller used when ``scope`` is what an old name led to: the
    refusal names what they asked for, never the new name of a project they cannot read.
    """
    if principal.admin:
        return
    named = asked or scope
    if access(conn, principal, scope) >= need:
        if need is Access.WRITE and _live_alias(conn, scope):
            raise Forbidden(
                f"user {principal.name!r} may not create project {named}: it is the old name "
                "of a renamed project (an admin may create it)"
            )
        return
    verb = "write to" if need is Access.WRITE else "read"
    raise Forbidden(f"user {principal.name!r} may not {verb} project {named}")


def _live_alias(conn: sqlite3.Connection, scope: Scope) -> bool:
    return conn.execute(LIVE_ALIAS, (scope.workspace, scope.project)).fetchone() is not None


# -- administration: showing and changing a project's rule and grants ----------------------

PROJECT_RULE = """
SELECT p.visibility, p.created_by, u.name AS creator
FROM projects p LEFT JOIN users u ON u.id = p.created_by
WHERE p.workspace = ? AND p.name = ?
"""
GRANT_ROWS = """
SELECT u.name AS user, g.access, g.granted_at
FROM project_grants g JOIN users u ON u.id = g.user_id
WHERE g.workspace = ? AND g.project = ? ORDER BY u.name
"""
SET_VISIBILITY = "UPDATE projects SET visibility = ? WHERE workspace = ? AND name = ?"
UPSERT_GRANT = """
INSERT INTO project_grants(workspace, project, user_id, access, granted_at) VALUES (?, ?, ?, ?, ?)
ON CONFLICT(workspace, project, user_id) DO UPDATE SET access = excluded.access,
    granted_at = excluded.granted_at
"""
DROP_GRANT = "DELETE FROM project_grants WHERE workspace = ? AND project = ? AND user_id = ?"


def rule_row(conn: sqlite3.Connection, scope: Scope) -> sqlite3.Row | None:
    """The project's visibility and creator's name; None when there is no such project."""
    row: sqlite3.Row | None = conn.execute(
        PROJECT_RULE, (scope.workspace, scope.project)
    ).fetchone()
    return row


def grant_rows(conn: sqlite3.Connection, scope: Scope) -> list[sqlite3.Row]:
    return list(conn.execute(GRANT_ROWS, (scope.workspace, scope.project)))


def set_visibility(conn: sqlite3.Connection, scope: Scope, visibility: str) -> None:
    conn.execute(SET_VISIBILITY, (visibility, scope.workspace, scope.project))


def set_grant(conn: sqlite3.Connection, scope: Scope, user_id: int, access: str, now: str) -> None:
    conn.execute(UPSERT_GRANT, (scope.workspace, scope.project, user_id, access, now))


def drop_grant(conn: sqlite3.Connection, scope: Scope, user_id: int) -> bool:
    return conn.execute(DROP_GRANT, (scope.workspace, scope.project, user_id)).rowcount > 0


def not_hidden(alias: str = "") -> str:
    """A SQL condition leaving out rows of the projects in the JSON list :func:`hidden_json`."""
    prefix = f"{alias}." if alias else ""
    return f"({prefix}workspace || '/' || {prefix}project) NOT IN (SELECT value FROM json_each(?))"


def hidden_json(hide: frozenset[Scope]) -> str:
    return json.dumps(sorted(str(s) for s in hide))
