"""The link graph: pages one link away, either direction, from the best hits of other streams.

Neighbours of one seed are listed by identity (workspace, project, path), never
by row order: a reindex rewrites the link rows in another order, and the
ranking must not follow it.
"""

from __future__ import annotations

import sqlite3

from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.rows import PATH, PROJECT, WORKSPACE, PageRows
from ai_memory.retrieval.streams import StreamHit, StreamResult

# Two queries for all seeds together; per seed, neighbours come in identity order.
# CROSS JOIN keeps the links as the outer loop: ordered by path, the planner would
# rather walk every page of the project in index order than sort a few rows.
# A neighbour's identity orders the rows without being returned: its id names it,
# so the rows are as distinct without it, and each column returned is a cost per row.
OUTGOING = """
SELECT DISTINCT l.src_id AS seed, p.id
FROM links l INDEXED BY links_src
CROSS JOIN pages p ON p.workspace = l.dst_workspace AND p.project = l.dst_project
    AND p.path = l.dst_path
WHERE l.src_id IN ({marks}) AND {where}
ORDER BY p.workspace, p.project, p.path
"""

# Each column IN its values searches links_dst by all three (a row-value IN scans it);
# a pair of the cross product that is no seed is dropped when the rows are grouped.
INCOMING = """
SELECT DISTINCT l.dst_workspace, l.dst_project, l.dst_path, p.id
FROM links l INDEXED BY links_dst CROSS JOIN pages p ON p.id = l.src_id
WHERE l.dst_workspace IN ({workspaces}) AND l.dst_project IN ({projects})
    AND l.dst_path IN ({paths}) AND {where}
ORDER BY p.workspace, p.project, p.path
"""


def graph_stream(
    conn: sqlite3.Connection,
    seeds: list[int],
    page_filter: PageFilter,
    *,
    limit: int,
    seen: PageRows,
) -> StreamResult:
    """Neighbours ranked by the rank of the seed they hang off; seeds themselves excluded.

    The seeds' rows come from ``seen``: the streams that found them read them."""
    if not seeds:
        return StreamResult("graph", [])
    by_id = seen.read(conn, seeds)
    if not by_id:
        return StreamResult("graph", [])
    where, params = page_filter.where()
    found = padded(list(by_id))
    outgoing: dict[int, list[int]] = {}
    sql = OUTGOING.format(marks=marks(len(found)), where=where)
    for r in conn.execute(sql, (*found, *params)):
        outgoing.setdefault(int(r[0]), []).append(int(r[1]))  # seed, neighbour
    incoming: dict[tuple[str, str, str], list[int]] = {}
    identities = {(r[WORKSPACE], r[PROJECT], r[PATH]) for r in by_id.values()}
    columns = [padded(sorted({i[n] for i in identities})) for n in range(3)]
    sql = INCOMING.format(
        workspaces=marks(len(columns[0])),
        projects=marks(len(columns[1])),
        paths=marks(len(columns[2])),
        where=where,
    )
    for r in conn.execute(sql, (*columns[0], *columns[1], *columns[2], *params)):
        key = (r[0], r[1], r[2])  # the seed's identity
        if key in identities:
            incoming.setdefault(key, []).append(int(r[3]))
    hits: dict[int, StreamHit] = {}
    seed_set = set(seeds)
    for rank, seed in enumerate(seeds, start=1):
        row = by_id.get(seed)
        if row is None:
            continue
        path = row[PATH]
        key = (row[WORKSPACE], row[PROJECT], path)
        for direction, neighbours in (("out", outgoing.get(seed)), ("in", incoming.get(key))):
            for page_id in neighbours or ():
                if page_id in seed_set or page_id in hits:
                    continue
                edge = {"from": path, "direction": direction, "seed_rank": rank}
                hits[page_id] = StreamHit(page_id, 1.0 / rank, {"edge": edge})
    return StreamResult("graph", list(hits.values())[:limit])
