"""A project's link graph: the best-linked pages and the links between them, laid out.

The layout needs no script in the browser: pages are grouped by their top
folder, each folder is a cluster on a large circle, and a cluster's pages sit
on rings around its centre, hubs innermost. It costs O(pages + links), so it
stays cheap (and readable) at a few hundred nodes.
"""

from __future__ import annotations

import json
import math
import sqlite3
from collections import Counter, defaultdict
from dataclasses import dataclass
from itertools import chain
from typing import Any

from ai_memory.core.identity import Scope

MAX_NODES = 300
LABELLED = 15
SIZE = 1000.0
# Each as one JSON row: a graph is read anew after every write, and a few thousand
# rows stepped one at a time from Python cost twice what SQLite's own work does.
NODES = """
SELECT json_group_array(json_array(path, title, kind)) FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
"""
EDGES = """
SELECT json_group_array(json_array(rowid, src_path, dst_path)) FROM links
WHERE dst_workspace = ? AND dst_project = ? AND workspace = ? AND project = ?
  AND src_path != dst_path
"""


@dataclass(frozen=True, slots=True)
class ProjectLinks:
    """What a project's graph is drawn from (``graph_cache`` patches it after a write)."""

    pages: dict[str, tuple[str, str]]  # path -> (title, kind) of every live latest page
    links: dict[str, tuple[tuple[int, str], ...]]  # source path -> (link rowid, target path)


def graph(conn: sqlite3.Connection, scope: Scope, limit: int = MAX_NODES) -> dict[str, Any]:
    """``nodes`` (path, title, kind, folder, degree) and ``edges`` among the ``limit``
    best-linked pages; ``total`` pages and ``total_edges`` say what was left out."""
    return select(read_links(conn, scope), scope, limit)


def read_links(conn: sqlite3.Connection, scope: Scope) -> ProjectLinks:
    """The project's pages and links within it. (Only latest versions carry links, so
    the links table needs no join.)"""
    params = (scope.workspace, scope.project)
    pages = {path: (title, kind) for path, title, kind in _json_rows(conn, NODES, params)}
    links: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for rowid, src, dst in _json_rows(conn, EDGES, params + params):
        links[src].append((rowid, dst))
    return ProjectLinks(pages, {src: tuple(out) for src, out in links.items()})


def select(data: ProjectLinks, scope: Scope, limit: int) -> dict[str, Any]:
    """:func:`graph`'s answer from the project's pages and links."""
    pages = data.pages
    # Links in the order of the index on their target, duplicates dropped.
    ordered = sorted((dst, rowid, src) for src, out in data.links.items() for rowid, dst in out)
    links = dict.fromkeys((src, dst) for dst, _, src in ordered)
    edges = [(src, dst) for src, dst in links if src in pages and dst in pages]
    degree = Counter(chain.from_iterable(edges))
    # Best linked first, then the unlinked by path: the order of (-degree, path).
    chosen = [p for _, p in sorted([(-n, p) for p, n in degree.items()])[:limit]]
    if len(chosen) < limit:
        chosen += sorted(p for p in pages if p not in degree)[: limit - len(chosen)]
    keep = set(chosen)
    nodes = [
        {
            "path": p,
            "title": pages[p][0],
            "kind": pages[p][1],
            "folder": folder_of(p),
            "degree": degree[p],
        }
        for p in chosen
    ]
    shown = [{"src": s, "dst": d} for s, d in edges if s in keep and d in keep]
    return {
        "workspace": scope.workspace,
        "project": scope.project,
        "nodes": nodes,
        "edges": shown,
        "total": len(pages),
        "total_edges": len(edges),
    }


def _json_rows(conn: sqlite3.Connection, sql: str, params: tuple[str, ...]) -> list[list[Any]]:
    rows: list[list[Any]] = json.loads(conn.execute(sql, params).fetchone()[0])
    return rows


def folder_of(path: str) -> str:
    return path.split("/", 1)[0] if "/" in path else "(top)"


def layout(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with x/y/r on every node, line ends on every edge, cluster labels."""
    by_folder: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for node in data["nodes"]:
        by_folder[node["folder"]].append(node)
    folders = sorted(by_folder, key=lambda f: (-len(by_folder[f]), f))
    centre = SIZE / 2
    ring = SIZE * 0.32 if len(folders) > 1 else 0.0
    clusters = []
    for i, folder in enumerate(folders):
        angle = 2 * math.pi * i / max(len(folders), 1) - math.pi / 2
        cx, cy = centre + ring * math.cos(angle), centre + ring * math.sin(angle)
        members = sorted(by_folder[folder], key=lambda n: (-n["degree"], n["path"]))
        _place(members, cx, cy, len(folders))
        clusters.append(
            {
                "name": folder,
                "x": round(cx, 1),
                "y": round(cy - _radius(len(members), len(folders)) - 14, 1),
                "count": len(members),
            }
        )
    at = {n["path"]: n for n in data["nodes"]}
    lines = [
        {
            **e,
            "x1": at[e["src"]]["x"],
            "y1": at[e["src"]]["y"],
            "x2": at[e["dst"]]["x"],
            "y2": at[e["dst"]]["y"],
        }
        for e in data["edges"]
    ]
    labelled = {
        n["path"]
        for n in sorted(data["nodes"], key=lambda n: -n["degree"])[:LABELLED]
        if n["degree"]
    }
    for node in data["nodes"]:
        node["label"] = node["path"] in labelled
    return {**data, "lines": lines, "clusters": clusters, "size": SIZE}


def _radius(count: int, clusters: int) -> float:
    limit = SIZE * (0.17 if clusters > 1 else 0.45)
    return min(limit, 20.0 + 22.0 * math.sqrt(count))


def _place(members: list[dict[str, Any]], cx: float, cy: float, clusters: int) -> None:
    """Sunflower (golden-angle) spiral: even spacing at any count, hubs at the centre."""
    radius = _radius(len(members), clusters)
    golden = math.pi * (3 - math.sqrt(5))
    for k, node in enumerate(members):
        distance = radius * math.sqrt((k + 0.5) / len(members))
        node["x"] = round(cx + distance * math.cos(k * golden), 1)
        node["y"] = round(cy + distance * math.sin(k * golden), 1)
        node["r"] = round(min(3.0 + 1.2 * math.sqrt(node["degree"]), 12.0), 1)
