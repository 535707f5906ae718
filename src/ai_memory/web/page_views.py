"""A project's folder tree and a unified diff between two versions of a page."""

from __future__ import annotations

import difflib
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.identity import Scope

PAGES_SHOWN = 50  # per folder; the rest are a link away (search by path)
# Sorted here rather than in SQL, so the read stays on the covering listing index.
TREE = """
SELECT path, title, kind FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
"""


@dataclass
class Folder:
    name: str
    prefix: str
    folders: dict[str, Folder] = field(default_factory=dict)
    pages: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    kinds: Counter[str] = field(default_factory=Counter)

    @property
    def children(self) -> list[Folder]:
        return [self.folders[name] for name in sorted(self.folders)]

    @property
    def hidden(self) -> int:
        return max(0, len(self.pages) - PAGES_SHOWN)

    @property
    def shown(self) -> list[dict[str, Any]]:
        return self.pages[:PAGES_SHOWN]


def tree(conn: sqlite3.Connection, scope: Scope) -> Folder:
    """Every latest page under its folders, each folder with its page count per kind."""
    cursor = conn.execute(TREE, (scope.workspace, scope.project))
    cursor.row_factory = None  # plain tuples: thousands of rows
    return folders(cursor.fetchall())


def folders(rows: Iterable[tuple[str, str, str]]) -> Folder:
    """:func:`tree` from the (path, title, kind) of every latest page."""
    root = Folder("", "")
    for path, title, kind in sorted(rows):
        *parts, _ = path.split("/")
        node = root
        node.count += 1
        node.kinds[kind] += 1
        for part in parts:
            child = node.folders.get(part)
            if child is None:  # built once per folder, not once per page
                child = node.folders[part] = Folder(part, f"{node.prefix}{part}/")
            node = child
            node.count += 1
            node.kinds[kind] += 1
        node.pages.append({"path": path, "title": title, "kind": kind})
    return root


def unified_diff(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, str]]:
    """The lines of a unified diff of two versions (title and body), each with its class."""
    before = _text(old).splitlines()
    after = _text(new).splitlines()
    lines = difflib.unified_diff(
        before, after, f"v{old['version']}", f"v{new['version']}", lineterm="", n=3
    )
    return [{"text": line, "class": line_class(line)} for line in lines]


def _text(page: dict[str, Any]) -> str:
    return f"title: {page['title']}\nkind: {page['kind']}\n\n{page['body']}"


def line_class(line: str) -> str:
    """The CSS class of one unified-diff line (the pending-writes page uses it too)."""
    if line.startswith(("+++", "---")):
        return "file"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "same")
