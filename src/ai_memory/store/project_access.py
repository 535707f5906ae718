"""Reading a project's access rule and grants (migration 16)."""

from __future__ import annotations

import sqlite3

from ai_memory.core.errors import Forbidden
from ai_memory.core.identity import Scope
from ai_memory.core.principal import OPEN, Access, Principal, ProjectPolicy, access_to

POLICY = "SELECT visibility, created_by FROM projects WHERE workspace = ? AND name = ?"
GRANTS = "SELECT user_id, access FROM project_grants WHERE workspace = ? AND project = ?"
# Restricted projects are few; reading them all is how search learns what to leave out.
RESTRICTED = """
SELECT p.workspace, p.name, p.created_by, g.access
FROM projects p
LEFT JOIN project_grants g ON g.workspace = p.workspace AND g.project = p.name AND g.user_id = ?
WHERE p.visibility = 'restricted'
"""


def policy(conn: sqlite3.Connection, scope: Scope) -> ProjectPolicy:
    """A project's rule; a project that does not exist yet is open (its creator decides)."""
    row = conn.execute(POLICY, (scope.workspace, scope.project)).fetchone()
    if row is None or row["visibility"] == "open":
        return OPEN
    grants = {
        int(g["user_id"]): Access.of(g["access"])
        for g in conn.execute(GRANTS, (scope.workspace, scope.project))
    }
    created_by = int(row["created_by"]) if row["created_by"] is not None else None
    return ProjectPolicy("restricted", created_by, grants)


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
        if row["created_by"] == principal.user_id or row["access"] is not None:
            continue
        hidden.add(Scope(row["workspace"], row["name"]))
    return frozenset(hidden)


def authorize(conn: sqlite3.Connection, principal: Principal, scope: Scope, need: Access) -> None:
    """The one check every route, tool and search runs before it reads a project's rows."""
    if principal.admin:
        return
    if access(conn, principal, scope) >= need:
        return
    verb = "write to" if need is Access.WRITE else "read"
    raise Forbidden(f"user {principal.name!r} may not {verb} project {scope}")


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
