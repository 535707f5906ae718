"""Reading one page (at a version, by id, or its latest) and its history, on a reader
connection: what the wiki, the local CLI reads and the API share."""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.errors import NotFound
from ai_memory.core.identity import PageRef
from ai_memory.store import pages


def read_page(
    conn: sqlite3.Connection, ref: PageRef, version: int | None, page_id: int | None
) -> dict[str, Any]:
    if page_id is not None:
        row = conn.execute(pages.BY_ID, (page_id,)).fetchone()
        if row is not None and (row["workspace"], row["project"], row["path"]) != (
            ref.workspace,
            ref.project,
            ref.path,
        ):
            row = None
    elif version is not None:
        row = conn.execute(
            pages.BY_VERSION, (ref.workspace, ref.project, ref.path, version)
        ).fetchone()
    else:
        row = pages.latest(conn, ref)
    if row is None:
        which = f" version {version}" if version else f" page_id {page_id}" if page_id else ""
        raise NotFound(f"no page {ref}{which}")
    data = pages.row_to_dict(row)
    data["links"] = [
        {
            "workspace": link["dst_workspace"],
            "project": link["dst_project"],
            "path": link["dst_path"],
            "label": link["label"],
            "resolved": link["dst_id"] is not None,
        }
        for link in conn.execute(pages.OUTGOING_LINKS, (row["id"],))
    ]
    data["backlinks"] = [
        {"workspace": link["workspace"], "project": link["project"], "path": link["src_path"]}
        for link in conn.execute(pages.INCOMING_LINKS, (ref.workspace, ref.project, ref.path))
    ]
    return data


def history(conn: sqlite3.Connection, ref: PageRef) -> list[dict[str, Any]]:
    rows = conn.execute(pages.HISTORY, (ref.workspace, ref.project, ref.path)).fetchall()
    if not rows:
        raise NotFound(f"no page {ref}")
    return [
        {
            "page_id": r["id"],
            "version": r["version"],
            "is_latest": bool(r["is_latest"]),
            "supersedes": r["supersedes"],
            "title": r["title"],
            "content_hash": r["content_hash"],
            "created_at": r["created_at"],
            "deleted_at": r["deleted_at"],
            "actor": r["actor"],
        }
        for r in rows
    ]
