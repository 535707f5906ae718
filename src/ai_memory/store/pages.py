"""SQL for page versions and everything indexed with them (FTS, links, entities).

Functions here run inside the writer's transaction (``conn`` is the writing
connection) or on a reader; they never commit.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from ai_memory.core import principal
from ai_memory.core.errors import Conflict
from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.page import PageDocument
from ai_memory.core.text import fts_text, has_cjk, normalise_entity
from ai_memory.store.acting import acting

PAGE_COLUMNS = (
    "id, workspace, project, path, version, is_latest, supersedes, title, kind, tier, tags, "
    "pinned, expires_at, frontmatter, frontmatter_error, body, content_hash, created_at, "
    "deleted_at, actor, access_count, last_access_at"
)

LATEST = f"""
SELECT {PAGE_COLUMNS} FROM pages
WHERE workspace = ? AND project = ? AND path = ? AND is_latest = 1
"""

LAST_VERSION = """
SELECT id, version, deleted_at FROM pages
WHERE workspace = ? AND project = ? AND path = ? ORDER BY version DESC LIMIT 1
"""

NEWEST = f"""
SELECT {PAGE_COLUMNS} FROM pages
WHERE workspace = ? AND project = ? AND path = ? ORDER BY version DESC LIMIT 1
"""

BY_ID = f"SELECT {PAGE_COLUMNS} FROM pages WHERE id = ?"

BY_VERSION = f"""
SELECT {PAGE_COLUMNS} FROM pages
WHERE workspace = ? AND project = ? AND path = ? AND version = ?
"""

HISTORY = """
SELECT id, version, is_latest, supersedes, title, content_hash, created_at, deleted_at, actor
FROM pages WHERE workspace = ? AND project = ? AND path = ? ORDER BY version DESC
"""

RECENT = f"""
SELECT {PAGE_COLUMNS} FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1
ORDER BY created_at DESC, id DESC LIMIT ?
"""

ALL_LATEST_IN_PROJECT = """
SELECT id, path, content_hash FROM pages WHERE workspace = ? AND project = ? AND is_latest = 1
"""

ALL_LATEST = """
SELECT id, workspace, project, path, content_hash FROM pages WHERE is_latest = 1
"""

RETIRE = "UPDATE pages SET is_latest = 0 WHERE id = ?"
MARK_DELETED = "UPDATE pages SET is_latest = 0, deleted_at = ? WHERE id = ?"

INSERT_PAGE = """
INSERT INTO pages (workspace, project, path, version, is_latest, supersedes, title, kind, tier,
    tags, pinned, expires_at, frontmatter, frontmatter_error, body, content_hash, created_at,
    actor)
VALUES (?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
"""

INSERT_FTS = "INSERT INTO pages_fts(rowid, title, body) VALUES (?, ?, ?)"
# The page index is contentless: removing a row repeats the text it indexed, and
# only a row that is indexed may be removed (its docsize entry says so), or the
# term counts of the whole index would go wrong.
DELETE_FTS = """
INSERT INTO pages_fts(pages_fts, rowid, title, body)
SELECT 'delete', id, fts_text(title), fts_text(body) FROM pages
WHERE id = :id AND EXISTS (SELECT 1 FROM pages_fts_docsize WHERE id = :id)
"""
INSERT_CJK = "INSERT INTO pages_cjk(rowid, title, body) VALUES (?, ?, ?)"
DELETE_CJK = "DELETE FROM pages_cjk WHERE rowid = ?"
DELETE_VECTORS = "DELETE FROM page_vectors WHERE page_id = ?"
INSERT_LINK = """
INSERT INTO links (src_id, workspace, project, src_path, dst_workspace, dst_project, dst_path,
    label) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""
DELETE_LINKS = "DELETE FROM links WHERE src_id = ?"
INSERT_ENTITY = "INSERT INTO entities (page_id, workspace, project, name, norm) VALUES (?,?,?,?,?)"
DELETE_ENTITIES = "DELETE FROM entities WHERE page_id = ?"

ENSURE_WORKSPACE = "INSERT OR IGNORE INTO workspaces(name, created_at) VALUES (?, ?)"
ENSURE_PROJECT = """
INSERT OR IGNORE INTO projects(workspace, name, created_at, created_by) VALUES (?, ?, ?, ?)
"""
SET_PROJECT_REMOTE = (
    "UPDATE projects SET remote = ? WHERE workspace = ? AND name = ? AND remote IS NULL"
)

PROJECTS = """
SELECT p.workspace, p.name, p.remote, p.created_at,
    (SELECT count(*) FROM pages g WHERE g.workspace = p.workspace AND g.project = p.name
        AND g.is_latest = 1) AS pages
FROM projects p ORDER BY p.workspace, p.name
"""

PROJECT_EXISTS = "SELECT 1 FROM projects WHERE workspace = ? AND name = ?"
PROJECT_NAMES = "SELECT name FROM projects WHERE workspace = ?"

OUTGOING_LINKS = """
SELECT l.dst_workspace, l.dst_project, l.dst_path, l.label, d.id AS dst_id
FROM links l
LEFT JOIN pages d ON d.workspace = l.dst_workspace AND d.project = l.dst_project
    AND d.path = l.dst_path AND d.is_latest = 1
WHERE l.src_id = ?
"""

INCOMING_LINKS = """
SELECT l.workspace, l.project, l.src_path, l.label, l.src_id
FROM links l JOIN pages s ON s.id = l.src_id AND s.is_latest = 1
WHERE l.dst_workspace = ? AND l.dst_project = ? AND l.dst_path = ?
"""

# ``json.dumps`` with any option builds a new encoder at each call.
_UNICODE_JSON = json.JSONEncoder(ensure_ascii=False).encode

INSERT_AUDIT = """
INSERT INTO audit_log (at, actor, action, workspace, project, path, detail, user_name)
VALUES (?, ?, ?, ?, ?, ?, ?, ?)
"""


def ensure_project(
    conn: sqlite3.Connection, scope: Scope, now: str, *, on_disk: bool = False
) -> None:
    """Create the project unless it exists; refuse a new one whose name differs from an
    existing one's only by case, unless its folder is ``on_disk`` already (a reindex
    indexes what is there): on a file system that folds case (macOS, Windows, a clone of
    the wiki there) both would be one folder, and access to one would reach the other."""
    if project_exists(conn, scope):  # one lookup, where two inserts would be ignored
        return
    if not on_disk:
        refuse_case_twin(conn, scope)
    conn.execute(ENSURE_WORKSPACE, (scope.workspace, now))
    creator = principal.creator(acting(), scope.project)  # never a user for _global
    conn.execute(ENSURE_PROJECT, (scope.workspace, scope.project, now, creator))


def refuse_case_twin(conn: sqlite3.Connection, scope: Scope, besides: str | None = None) -> None:
    """Raise Conflict if another project of the workspace (not ``besides``) has the name
    of ``scope``'s new one in another case."""
    folded = scope.project.casefold()
    for (name,) in conn.execute(PROJECT_NAMES, (scope.workspace,)):
        if name.casefold() == folded and name not in (scope.project, besides):
            raise Conflict(
                f"project {scope.project!r} differs from the project {name!r} only by "
                "case: on a file system that folds case their folders would be one"
            )


def set_project_remote(conn: sqlite3.Connection, scope: Scope, remote: str) -> None:
    """Record the project's git remote (normalised) unless one is recorded already."""
    conn.execute(SET_PROJECT_REMOTE, (remote, scope.workspace, scope.project))


def list_projects(conn: sqlite3.Connection) -> list[dict[str, Any]]:
    """Every project with its count of latest pages."""
    return [dict(row) for row in conn.execute(PROJECTS)]


def project_exists(conn: sqlite3.Connection, scope: Scope) -> bool:
    return conn.execute(PROJECT_EXISTS, (scope.workspace, scope.project)).fetchone() is not None


def latest(conn: sqlite3.Connection, ref: PageRef) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(
        LATEST, (ref.workspace, ref.project, ref.path)
    ).fetchone()
    return row


def newest(conn: sqlite3.Connection, ref: PageRef) -> sqlite3.Row | None:
    """The last version of ``ref`` (its latest, or its tombstone once deleted), or None:
    what :func:`latest` and :func:`insert_version` each look up, in one statement."""
    row: sqlite3.Row | None = conn.execute(
        NEWEST, (ref.workspace, ref.project, ref.path)
    ).fetchone()
    return row


def insert_version(
    conn: sqlite3.Connection, ref: PageRef, doc: PageDocument, *, now: str, actor: str
) -> tuple[int, int]:
    """Write ``doc`` as the new latest version of ``ref``; return (page_id, version)."""
    last = conn.execute(LAST_VERSION, (ref.workspace, ref.project, ref.path)).fetchone()
    return insert_after(conn, ref, doc, last, now=now, actor=actor)


def insert_after(
    conn: sqlite3.Connection,
    ref: PageRef,
    doc: PageDocument,
    last: sqlite3.Row | None,
    *,
    now: str,
    actor: str,
) -> tuple[int, int]:
    """:func:`insert_version` when the caller has just read ``last`` (:func:`newest`)."""
    previous_id: int | None = None
    version = 1
    if last is not None:
        version = last["version"] + 1
        previous_id = last["id"]
        if last["deleted_at"] is None:
            retire(conn, previous_id)
    cursor = conn.execute(
        INSERT_PAGE,
        (
            ref.workspace,
            ref.project,
            ref.path,
            version,
            previous_id,
            doc.title,
            doc.kind,
            doc.tier,
            json.dumps(list(doc.tags)) if doc.tags else "[]",
            int(doc.pinned),
            doc.expires_at,
            _UNICODE_JSON(doc.frontmatter),
            doc.frontmatter_error,
            doc.body,
            doc.content_hash,
            now,
            actor,
        ),
    )
    page_id = int(cursor.lastrowid or 0)
    index_derived(conn, page_id, ref, doc)
    return page_id, version


def index_derived(conn: sqlite3.Connection, page_id: int, ref: PageRef, doc: PageDocument) -> None:
    """FTS, links and entities of one latest version; same transaction as the page row."""
    conn.execute(INSERT_FTS, (page_id, fts_text(doc.title), fts_text(doc.body)))
    if not (doc.title.isascii() and doc.body.isascii()) and (
        has_cjk(doc.title) or has_cjk(doc.body)
    ):
        # Only pages that hold CJK text pay for the trigram companion index.
        conn.execute(INSERT_CJK, (page_id, doc.title, doc.body))
    conn.executemany(
        INSERT_LINK,
        [
            (page_id, ref.workspace, ref.project, ref.path, t.workspace, t.project, t.path, t.label)
            for t in doc.links
        ],
    )
    conn.executemany(
        INSERT_ENTITY,
        [
            (page_id, ref.workspace, ref.project, name, normalise_entity(name))
            for name in doc.entities
        ],
    )


def drop_derived(conn: sqlite3.Connection, page_id: int) -> None:
    conn.execute(DELETE_FTS, {"id": page_id})
    conn.execute(DELETE_CJK, (page_id,))
    conn.execute(DELETE_LINKS, (page_id,))
    conn.execute(DELETE_ENTITIES, (page_id,))
    conn.execute(DELETE_VECTORS, (page_id,))


def clear_derived(conn: sqlite3.Connection) -> None:
    """Empty every table derived from page text, before a full rebuild."""
    conn.execute("INSERT INTO pages_fts(pages_fts) VALUES ('delete-all')")
    conn.execute("DELETE FROM pages_cjk")
    conn.execute("DELETE FROM links")
    conn.execute("DELETE FROM entities")


def retire(conn: sqlite3.Connection, page_id: int) -> None:
    conn.execute(RETIRE, (page_id,))
    drop_derived(conn, page_id)


def mark_deleted(conn: sqlite3.Connection, page_id: int, now: str) -> None:
    conn.execute(MARK_DELETED, (now, page_id))
    drop_derived(conn, page_id)


def audit(
    conn: sqlite3.Connection,
    *,
    now: str,
    actor: str,
    action: str,
    ref: PageRef | None = None,
    detail: dict[str, Any] | None = None,
) -> None:
    conn.execute(
        INSERT_AUDIT,
        (
            now,
            actor,
            action,
            ref.workspace if ref else None,
            ref.project if ref else None,
            ref.path if ref else None,
            json.dumps(detail or {}),
            acting().name,
        ),
    )


def row_to_dict(row: sqlite3.Row, *, with_body: bool = True) -> dict[str, Any]:
    """The JSON shape of a page version on every surface."""
    data: dict[str, Any] = {
        "page_id": row["id"],
        "workspace": row["workspace"],
        "project": row["project"],
        "path": row["path"],
        "version": row["version"],
        "is_latest": bool(row["is_latest"]),
        "supersedes": row["supersedes"],
        "title": row["title"],
        "kind": row["kind"],
        "tier": row["tier"],
        "tags": json.loads(row["tags"]),
        "pinned": bool(row["pinned"]),
        "expires_at": row["expires_at"],
        "frontmatter": json.loads(row["frontmatter"]),
        "frontmatter_error": row["frontmatter_error"],
        "created_at": row["created_at"],
        "deleted_at": row["deleted_at"],
    }
    if with_body:
        data["body"] = row["body"]
    return data


def row_frontmatter(row: sqlite3.Row) -> dict[str, Any]:
    value: dict[str, Any] = json.loads(row["frontmatter"])
    return value
