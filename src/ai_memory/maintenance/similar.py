"""The advisory lint rule: dormant semantic or procedural pages that say nearly the same.

Two pages whose stored embeddings (the mean of their chunk vectors) fall inside
the cosine band ``[similar_min, similar_max]`` are similar enough that one may
contradict or repeat the other; above the band they are copies, which the
duplicate-title rule or a reader finds anyway. Only pages nobody has read for
long (dormant: cold if their tier let them decay) are compared, at most
``MAX_PAGES`` per project. Needs numpy, which stored embeddings come with.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.maintenance.sweep import decay_params, page_age
from ai_memory.store.decay import dormant

MAX_PAGES = 2000
MAX_PAIRS = 200

IDENTITY = """
SELECT v.provider, v.model, v.dim FROM page_vectors v
WHERE v.workspace = ? AND v.project = ?
GROUP BY v.provider, v.model, v.dim ORDER BY count(*) DESC LIMIT 1
"""
CANDIDATES = """
SELECT p.id, p.path, p.tier, p.pinned, p.created_at, p.access_count, p.last_access_at,
    v.vector
FROM pages p JOIN page_vectors v ON v.page_id = p.id
WHERE p.workspace = ? AND p.project = ? AND p.is_latest = 1 AND p.pinned = 0
    AND p.tier IN ('semantic', 'procedural')
    AND v.provider = ? AND v.model = ? AND v.dim = ?
ORDER BY p.id, v.chunk
"""


def similar_pairs(
    conn: sqlite3.Connection, config: Config, scope: Scope, now: str
) -> Iterator[tuple[str, str, float]]:
    """(path, other path, cosine) for each dormant pair inside the band, strongest first."""
    try:
        import numpy as np
    except ImportError:  # no embeddings extra: no stored vectors either
        return
    identity = conn.execute(IDENTITY, (scope.workspace, scope.project)).fetchone()
    if identity is None:
        return
    moment = datetime.fromisoformat(now.replace("Z", "+00:00"))
    params = decay_params(config)
    paths: list[str] = []
    chunks: dict[str, list[bytes]] = {}
    for row in conn.execute(CANDIDATES, (scope.workspace, scope.project, *identity)):
        if row["path"] not in chunks:
            if len(paths) >= MAX_PAGES or not dormant(page_age(row, [], params), moment, params):
                chunks.setdefault(row["path"], [])
                continue
            paths.append(row["path"])
        chunks.setdefault(row["path"], []).append(row["vector"])
    if len(paths) < 2:
        return
    dim = int(identity["dim"])
    means = np.stack(
        [
            np.frombuffer(b"".join(chunks[p]), dtype=np.float16)
            .reshape(-1, dim)
            .astype(np.float32)
            .mean(axis=0)
            for p in paths
        ]
    )
    means /= np.maximum(np.linalg.norm(means, axis=1, keepdims=True), 1e-12)
    cosine: Any = means @ means.T
    low, high = config.maintenance.similar_min, config.maintenance.similar_max
    rows, cols = np.nonzero(np.triu((cosine >= low) & (cosine <= high), k=1))
    found = sorted(
        ((float(cosine[i, j]), paths[i], paths[j]) for i, j in zip(rows, cols, strict=True)),
        reverse=True,
    )
    for value, first, second in found[:MAX_PAIRS]:
        yield first, second, value
