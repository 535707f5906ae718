"""A project's pages and links for its graph, kept and patched after each write.

Right after a write the graph page renders anew, and reading a big project's
pages and links cost more than the rest of the page (≈ 15 ms at 2,000 pages,
the write having emptied SQLite's page cache). A write names the page it
changed in the audit log, so the copy kept here is patched by re-reading only
the pages written since: their titles and kinds, and the links from them. Any
other change (one the audit log does not tie to single pages, a rebuild, more
than ``MOST_CHANGES`` at once) reads the project whole again, as before.
"""

from __future__ import annotations

import sqlite3
import threading
from collections import OrderedDict

from ai_memory.core.identity import Scope
from ai_memory.web.graph import ProjectLinks, read_links
from ai_memory.web.render_cache import CHANGES_PAGES, data_version

# What happened since the copy was read (both by rowid, so a short range scan).
AUDIT_SINCE = f"""
SELECT action, workspace, project, path FROM audit_log WHERE id > ? AND {CHANGES_PAGES} LIMIT ?
"""
VERSIONS_SINCE = "SELECT workspace, project, path FROM pages WHERE id > ? LIMIT ?"
# The actions that change one page, named in the row, and nothing else.
PAGE_ACTIONS = frozenset({"write", "delete"})
MOST_CHANGES = 200
PAGE_NOW = """
SELECT title, kind FROM pages
WHERE workspace = ? AND project = ? AND path = ? AND is_latest = 1 AND deleted_at IS NULL
"""
# The links from every version of the page, as the project's whole read finds them
# (from the page's versions to their links by source: the unary plus keeps SQLite off
# the index on targets, which would walk every link into the project).
LINKS_FROM = """
SELECT l.rowid, l.dst_path FROM pages p CROSS JOIN links l ON l.src_id = p.id
WHERE p.workspace = ? AND p.project = ? AND p.path = ?
  AND +l.dst_workspace = ? AND +l.dst_project = ? AND l.workspace = ? AND l.project = ?
  AND l.src_path != l.dst_path
"""
PROJECTS = 16
# Pages kept at most over every project (each costs a few hundred bytes with its
# links): beyond it the projects viewed longest ago are dropped, the last one kept.
MOST_PAGES = 50_000

Version = tuple[int, int]


class GraphCache:
    """One per app, shared by the reader threads; at most ``projects`` projects and
    ``most_pages`` pages."""

    def __init__(self, projects: int = PROJECTS, most_pages: int = MOST_PAGES) -> None:
        self.projects = projects
        self.most_pages = most_pages
        self._lock = threading.Lock()
        self._kept: OrderedDict[Scope, tuple[Version, ProjectLinks]] = OrderedDict()

    def links(self, conn: sqlite3.Connection, scope: Scope) -> ProjectLinks:
        """The project's pages and links as of ``conn``'s snapshot (one read transaction)."""
        version = data_version(conn)
        with self._lock:
            kept = self._kept.get(scope)
        data = None
        if kept is not None and kept[0] == version:
            data = kept[1]
        elif kept is not None:
            changed = changed_paths(conn, scope, kept[0], version)
            data = None if changed is None else patched(conn, scope, kept[1], changed)
        if data is None:
            data = read_links(conn, scope)
        with self._lock:
            self._kept[scope] = (version, data)
            self._kept.move_to_end(scope)
            while len(self._kept) > 1 and (
                len(self._kept) > self.projects
                or sum(len(d.pages) for _, d in self._kept.values()) > self.most_pages
            ):
                self._kept.popitem(last=False)
        return data


def changed_paths(
    conn: sqlite3.Connection, scope: Scope, since: Version, now: Version
) -> set[str] | None:
    """The project's pages written between the two versions; None when that cannot
    be told from single-page changes."""
    if now[0] < since[0] or now[1] < since[1]:
        return None  # the index was rebuilt
    audited = conn.execute(AUDIT_SINCE, (since[0], MOST_CHANGES + 1)).fetchall()
    written = conn.execute(VERSIONS_SINCE, (since[1], MOST_CHANGES + 1)).fetchall()
    if len(audited) > MOST_CHANGES or len(written) > MOST_CHANGES:
        return None
    if any(r[0] not in PAGE_ACTIONS or r[3] is None for r in audited):
        return None
    here = (scope.workspace, scope.project)
    return {r[3] for r in audited if (r[1], r[2]) == here} | {
        r[2] for r in written if (r[0], r[1]) == here
    }


def patched(
    conn: sqlite3.Connection, scope: Scope, data: ProjectLinks, paths: set[str]
) -> ProjectLinks:
    """``data`` with each of ``paths`` read again: its title and kind, its links."""
    pages, links = dict(data.pages), dict(data.links)
    ws, project = scope.workspace, scope.project
    for path in paths:
        row = conn.execute(PAGE_NOW, (ws, project, path)).fetchone()
        if row is None:
            pages.pop(path, None)
        else:
            pages[path] = (row[0], row[1])
        params = (ws, project, path, ws, project, ws, project)
        out = tuple((int(r[0]), r[1]) for r in conn.execute(LINKS_FROM, params))
        if out:
            links[path] = out
        else:
            links.pop(path, None)
    return ProjectLinks(pages, links)
