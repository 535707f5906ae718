"""The link graph: pages one link away, either direction, from the best hits of other streams.

Neighbours of one seed are listed by identity (workspace, project, path), never
by row order: a reindex rewrites the link rows in another order, and the
ranking must not follow it.
"""

from __future__ import annotations

import sqlite3

from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.streams import StreamHit, StreamResult

SEEDS = "SELECT id, workspace, project, path FROM pages WHERE id IN ({marks})"

OUTGOING = """
SELECT DISTINCT p.id, p.workspace, p.project, p.path FROM links l INDEXED BY links_src
JOIN pages p ON p.workspace = l.dst_workspace AND p.project = l.dst_project
    AND p.path = l.dst_path
WHERE l.src_id = ? AND {where}
ORDER BY p.workspace, p.project, p.path
"""

INCOMING = """
SELECT DISTINCT p.id, p.workspace, p.project, p.path FROM links l JOIN pages p ON p.id = l.src_id
WHERE l.dst_workspace = ? AND l.dst_project = ? AND l.dst_path = ? AND {where}
ORDER BY p.workspace, p.project, p.path
"""


def graph_stream(
    conn: sqlite3.Connection, seeds: list[int], page_filter: PageFilter, *, limit: int
) -> StreamResult:
    """Neighbours ranked by the rank of the seed they hang off; seeds themselves excluded."""
    if not seeds:
        return StreamResult("graph", [])
    rows = conn.execute(SEEDS.format(marks=",".join("?" * len(seeds))), seeds).fetchall()
    by_id = {int(row["id"]): row for row in rows}
    where, params = page_filter.where()
    hits: dict[int, StreamHit] = {}
    seed_set = set(seeds)
    for rank, seed in enumerate(seeds, start=1):
        row = by_id.get(seed)
        if row is None:
            continue
        edges = [("out", r) for r in conn.execute(OUTGOING.format(where=where), (seed, *params))]
        edges += [
            ("in", r)
            for r in conn.execute(
                INCOMING.format(where=where),
                (row["workspace"], row["project"], row["path"], *params),
            )
        ]
        for direction, neighbour in edges:
            page_id = int(neighbour["id"])
            if page_id in seed_set or page_id in hits:
                continue
            edge = {"from": row["path"], "direction": direction, "seed_rank": rank}
            hits[page_id] = StreamHit(page_id, 1.0 / rank, {"edge": edge})
    return StreamResult("graph", list(hits.values())[:limit])
