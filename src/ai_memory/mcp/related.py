"""Walking the link graph from one page: bounded, cycle-safe, across projects."""

from __future__ import annotations

import sqlite3
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from ai_memory.core.identity import PageRef, Scope
from ai_memory.store import pages

MAX_DEPTH = 3
MAX_PAGES = 50

_NODE = (
    "SELECT id, title, kind FROM pages WHERE workspace = ? AND project = ? AND path = ? "
    "AND is_latest = 1"
)

Key = tuple[str, str, str]


def related_pages(
    conn: sqlite3.Connection,
    start: PageRef,
    depth: int,
    limit: int,
    shown: list[int] | None = None,
    hidden: frozenset[Scope] = frozenset(),
) -> list[dict[str, Any]]:
    """Pages linked from or to ``start``, breadth first, nearest first; the ids of those
    that exist are added to ``shown`` (they reinforce as read). Pages of a ``hidden``
    project are neither listed nor walked through, as if they did not exist."""
    origin: Key = (start.workspace, start.project, start.path)
    seen: set[Key] = {origin}
    found: list[dict[str, Any]] = []
    queue: deque[tuple[Key, int]] = deque([(origin, 0)])
    while queue and len(found) < limit:
        key, level = queue.popleft()
        if level >= depth:
            continue
        for neighbour, via in _neighbours(conn, key):
            if neighbour in seen or Scope(neighbour[0], neighbour[1]) in hidden:
                continue
            seen.add(neighbour)
            node = conn.execute(_NODE, neighbour).fetchone()
            found.append(_describe(neighbour, node, level + 1, via, key))
            if node is not None:
                queue.append((neighbour, level + 1))
                if shown is not None:
                    shown.append(int(node["id"]))
            if len(found) >= limit:
                break
    return found


def _neighbours(conn: sqlite3.Connection, key: Key) -> list[tuple[Key, str]]:
    row = conn.execute(_NODE, key).fetchone()
    result: list[tuple[Key, str]] = []
    if row is not None:
        for link in conn.execute(pages.OUTGOING_LINKS, (row["id"],)):
            result.append(((link["dst_workspace"], link["dst_project"], link["dst_path"]), "link"))
    for link in conn.execute(pages.INCOMING_LINKS, key):
        result.append(((link["workspace"], link["project"], link["src_path"]), "backlink"))
    return result


def _describe(
    key: Key, node: sqlite3.Row | None, depth: int, via: str, parent: Key
) -> dict[str, Any]:
    return {
        "workspace": key[0],
        "project": key[1],
        "path": key[2],
        "title": node["title"] if node is not None else None,
        "kind": node["kind"] if node is not None else None,
        "exists": node is not None,
        "depth": depth,
        "via": via,
        "from": f"{parent[0]}/{parent[1]}:{parent[2]}",
    }


def visible(items: Iterable[Mapping[str, Any]], hidden: frozenset[Scope]) -> list[Any]:
    """``items`` (each with ``workspace`` and ``project``) without those of hidden projects."""
    if not hidden:
        return list(items)
    return [item for item in items if Scope(item["workspace"], item["project"]) not in hidden]
