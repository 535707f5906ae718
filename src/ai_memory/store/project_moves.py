"""SQL that moves a project's rows to another (workspace, project), and its aliases.

Every table whose rows carry both a ``workspace`` and a ``project`` column is
found from the schema itself, so a table added later moves with the others
without this file knowing its name. Functions run inside the writer's
transaction (or on a reader, for counts); they never commit.
"""

from __future__ import annotations

import json
import sqlite3

from ai_memory.core.identity import Scope

TABLES = """
SELECT m.name FROM sqlite_master m
WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND m.sql NOT LIKE 'CREATE VIRTUAL%'
    AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'workspace')
    AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'project')
ORDER BY m.name
"""

PROJECT_ROW = """
SELECT workspace, name, remote, created_at, visibility, created_by
FROM projects WHERE workspace = ? AND name = ?
"""
INSERT_PROJECT = """
INSERT INTO projects(workspace, name, remote, created_at, visibility, created_by)
VALUES (?, ?, ?, ?, ?, ?)
"""
# A merge into a project: restricted content stays restricted, and its creator keeps writing.
ADOPT_RESTRICTED = "UPDATE projects SET visibility = 'restricted' WHERE workspace = ? AND name = ?"
CREATOR_GRANT = """
INSERT OR IGNORE INTO project_grants(workspace, project, user_id, access, granted_at)
VALUES (?, ?, ?, 'write', ?)
"""
# Mail to and from a project follows it (the messages table names its two ends apart).
MOVE_MESSAGES = (
    "UPDATE messages SET to_workspace = :to_ws, to_project = :to_p "
    "WHERE to_workspace = :ws AND to_project = :p",
    "UPDATE messages SET from_workspace = :to_ws, from_project = :to_p "
    "WHERE from_workspace = :ws AND from_project = :p",
)
ADOPT_REMOTE = "UPDATE projects SET remote = ? WHERE workspace = ? AND name = ? AND remote IS NULL"
DELETE_PROJECT = "DELETE FROM projects WHERE workspace = ? AND name = ?"
ENSURE_WORKSPACE = "INSERT OR IGNORE INTO workspaces(name, created_at) VALUES (?, ?)"

COUNT_LINKS_IN = "SELECT count(*) FROM links WHERE dst_workspace = ? AND dst_project = ?"
MOVE_LINKS_IN = """
UPDATE links SET dst_workspace = :to_ws, dst_project = :to_p
WHERE dst_workspace = :ws AND dst_project = :p
"""

# Pages of other projects whose links point into a scope (their text names it).
LINKING_PAGES = """
SELECT DISTINCT s.workspace, s.project, s.path FROM links l JOIN pages s ON s.id = l.src_id
WHERE l.dst_workspace = ? AND l.dst_project = ? AND s.is_latest = 1
    AND NOT (s.workspace = l.dst_workspace AND s.project = l.dst_project)
ORDER BY s.workspace, s.project, s.path
"""
LATEST_PATHS = """
SELECT id, path FROM pages WHERE workspace = ? AND project = ? AND is_latest = 1 ORDER BY path
"""
VERSION_IDS = "SELECT id, is_latest FROM pages WHERE workspace = ? AND project = ? AND path = ?"

# Changes whenever a page is written, deleted or re-derived: a plan read before it moved
# is still the plan when this reads the same inside the writer.
FINGERPRINT = """
SELECT (SELECT max(id) FROM pages), (SELECT count(*) FROM pages WHERE deleted_at IS NOT NULL),
    (SELECT max(id) FROM audit_log)
"""
ALIAS_ROWS = "SELECT workspace, name, target_workspace, target_project FROM project_aliases"
REPOINT_ALIASES = """
UPDATE project_aliases SET target_workspace = :to_ws, target_project = :to_p
WHERE target_workspace = :ws AND target_project = :p
"""
UPSERT_ALIAS = """
INSERT INTO project_aliases(workspace, name, target_workspace, target_project, created_at)
VALUES (?, ?, ?, ?, ?)
ON CONFLICT (workspace, name) DO UPDATE SET target_workspace = excluded.target_workspace,
    target_project = excluded.target_project, created_at = excluded.created_at
"""
DROP_ALIAS = "DELETE FROM project_aliases WHERE workspace = ? AND name = ?"
SESSION_MOVES = "SELECT detail FROM audit_log WHERE action = 'move-session' ORDER BY id"
ALIAS_OF = """
SELECT target_workspace, target_project FROM project_aliases WHERE workspace = ? AND name = ?
"""


def fingerprint(conn: sqlite3.Connection) -> tuple[object, ...]:
    return tuple(conn.execute(FINGERPRINT).fetchone())


def scoped_tables(conn: sqlite3.Connection) -> list[str]:
    """Every table keyed by (workspace, project), ``projects`` itself aside."""
    return [row[0] for row in conn.execute(TABLES)]


def count_rows(conn: sqlite3.Connection, scope: Scope) -> dict[str, int]:
    """Rows per table a move of ``scope`` takes along (links into it counted apart)."""
    counts = {
        table: int(
            conn.execute(
                f'SELECT count(*) FROM "{table}" WHERE workspace = ? AND project = ?',
                (scope.workspace, scope.project),
            ).fetchone()[0]
        )
        for table in scoped_tables(conn)
    }
    counts["links (incoming)"] = int(
        conn.execute(COUNT_LINKS_IN, (scope.workspace, scope.project)).fetchone()[0]
    )
    counts["projects"] = 1
    return counts


def move_rows(conn: sqlite3.Connection, src: Scope, dst: Scope, now: str) -> dict[str, int]:
    """Re-key every row of ``src`` to ``dst``; return the rows moved per table.

    A row that would collide with one ``dst`` holds already (a merge: the same session id
    or watermark in both) stays behind and is dropped with ``src``: ``dst``'s row wins.
    The projects row moves first, so the foreign keys hold at every statement.
    """
    conn.execute(ENSURE_WORKSPACE, (dst.workspace, now))
    row = conn.execute(PROJECT_ROW, (src.workspace, src.project)).fetchone()
    target = conn.execute(PROJECT_ROW, (dst.workspace, dst.project)).fetchone()
    if target is None:
        rule = (row["remote"], row["created_at"], row["visibility"], row["created_by"])
        conn.execute(INSERT_PROJECT, (dst.workspace, dst.project, *rule))
    else:
        _merge_rule(conn, row, target, dst, now)
    moved: dict[str, int] = {}
    for table in scoped_tables(conn):
        cursor = conn.execute(
            f'UPDATE OR IGNORE "{table}" SET workspace = ?, project = ? '
            "WHERE workspace = ? AND project = ?",
            (dst.workspace, dst.project, src.workspace, src.project),
        )
        moved[table] = cursor.rowcount
        left = conn.execute(
            f'DELETE FROM "{table}" WHERE workspace = ? AND project = ?',
            (src.workspace, src.project),
        ).rowcount
        if left:
            moved[f"{table} (dropped, already in target)"] = left
    params = _names(src, dst)
    moved["links (incoming)"] = conn.execute(MOVE_LINKS_IN, params).rowcount
    for statement in MOVE_MESSAGES:
        conn.execute(statement, params)
    conn.execute(DELETE_PROJECT, (src.workspace, src.project))
    moved["projects"] = 1
    return moved


def _merge_rule(
    conn: sqlite3.Connection, row: sqlite3.Row, target: sqlite3.Row, dst: Scope, now: str
) -> None:
    """What a merge keeps of the source's projects row: its remote when ``dst`` has none,
    its restriction, and its creator as a writer (grants move with the other rows)."""
    if row["remote"]:
        conn.execute(ADOPT_REMOTE, (row["remote"], dst.workspace, dst.project))
    if row["visibility"] == "restricted":
        conn.execute(ADOPT_RESTRICTED, (dst.workspace, dst.project))
    if row["created_by"] is not None and row["created_by"] != target["created_by"]:
        conn.execute(CREATOR_GRANT, (dst.workspace, dst.project, row["created_by"], now))


def alias(conn: sqlite3.Connection, src: Scope, dst: Scope, now: str) -> None:
    """Make ``src`` (and every name that already led to it) lead to ``dst``; ``dst`` is
    a real project now, so an alias of that name would only shadow it."""
    conn.execute(REPOINT_ALIASES, _names(src, dst))
    conn.execute(UPSERT_ALIAS, (src.workspace, src.project, dst.workspace, dst.project, now))
    conn.execute(DROP_ALIAS, (dst.workspace, dst.project))


def aliases(conn: sqlite3.Connection) -> dict[Scope, Scope]:
    """Every alias, old scope to the project it leads to."""
    return {Scope(row[0], row[1]): Scope(row[2], row[3]) for row in conn.execute(ALIAS_ROWS)}


def session_moves(conn: sqlite3.Connection) -> dict[tuple[Scope, str], Scope]:
    """(old scope, session id) to the project each moved session lives in now, replayed
    from the audit log in order: a session moved back and forth leads to its last place."""
    moves: dict[tuple[Scope, str], Scope] = {}
    for (detail,) in conn.execute(SESSION_MOVES):
        try:
            row = json.loads(detail)
            sid, was = row["session_id"], Scope(row["from_workspace"], row["from_project"])
            now = Scope(row["to_workspace"], row["to_project"])
        except (ValueError, KeyError, TypeError):
            continue  # an audit row written before moves were recorded this way
        moves.pop((now, sid), None)
        for key, target in list(moves.items()):
            if key[1] == sid and target == was:
                moves[key] = now
        moves[(was, sid)] = now
    return moves


def aliased(conn: sqlite3.Connection, scope: Scope) -> Scope:
    """The project ``scope`` leads to: itself, unless it was renamed, moved or merged."""
    row = conn.execute(ALIAS_OF, (scope.workspace, scope.project)).fetchone()
    return scope if row is None else Scope(row[0], row[1])


def linking_pages(conn: sqlite3.Connection, scope: Scope) -> list[tuple[str, str, str]]:
    """(workspace, project, path) of latest pages elsewhere that link into ``scope``."""
    rows = conn.execute(LINKING_PAGES, (scope.workspace, scope.project))
    return [(r[0], r[1], r[2]) for r in rows]


def latest_paths(conn: sqlite3.Connection, scope: Scope) -> dict[str, int]:
    """Path to latest page id of every live page of ``scope``."""
    rows = conn.execute(LATEST_PATHS, (scope.workspace, scope.project))
    return {r[1]: int(r[0]) for r in rows}


def _names(src: Scope, dst: Scope) -> dict[str, str]:
    return {"ws": src.workspace, "p": src.project, "to_ws": dst.workspace, "to_p": dst.project}
