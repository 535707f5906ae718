"""The vector stream: cosine similarity over page-chunk vectors held in a NumPy matrix.

The matrix is loaded from ``page_vectors`` (only rows of the configured
provider/model/dimension: vectors of another model are stale and ignored) and
topped up incrementally before each query. A page scores by its best chunk.
Rows of retired versions may linger in memory until the next full reload;
every candidate is re-checked against the page filter in SQL, so they never
surface.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from typing import Any

from ai_memory.llm.embeddings import Embedder
from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.streams import StreamHit, StreamResult
from ai_memory.store import vectors as sql
from ai_memory.store.readers import ReaderPool

RELOAD_CHECK_S = 30.0
CHUNKS_PER_HIT = 8

FILTER_PAGES = "SELECT p.id FROM pages p WHERE p.id IN ({marks}) AND {where}"


class VectorIndex:
    """In-memory vectors of one model, refreshed from the database on use."""

    def __init__(self, embedder: Embedder) -> None:
        import numpy as np

        self.np = np
        self.embedder = embedder
        self.identity = (embedder.provider, embedder.model, embedder.dim)
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        np = self.np
        self.matrix = np.zeros((0, self.embedder.dim), dtype=np.float32)
        self.page_ids = np.zeros(0, dtype=np.int64)
        self.chunks = np.zeros(0, dtype=np.int32)
        self.scopes = np.zeros(0, dtype=np.int32)
        self.scope_codes: dict[tuple[str, str], int] = {}
        self.last_id = 0
        self.checked_at = time.monotonic()

    def refresh(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if time.monotonic() - self.checked_at > RELOAD_CHECK_S:
                max_id, count = conn.execute(sql.STATE, self.identity).fetchone()
                self.checked_at = time.monotonic()
                if (max_id or 0) < self.last_id or int(count) < len(self.page_ids) * 0.8:
                    self._reset()  # many rows went away (rewrites, a model change): reload
            self._load(conn)

    def refresh_now(self, readers: ReaderPool) -> None:
        """Load every new vector now (a server warms up with this; so do benchmarks)."""
        readers.read(self.refresh)

    def _load(self, conn: sqlite3.Connection) -> None:
        np = self.np
        rows = conn.execute(sql.LOAD, (*self.identity, self.last_id)).fetchall()
        if not rows:
            return
        dim = self.embedder.dim
        block = np.frombuffer(b"".join(r["vector"] for r in rows), dtype=np.float16)
        block = block.reshape(len(rows), dim).astype(np.float32)
        codes = [
            self.scope_codes.setdefault((r["workspace"], r["project"]), len(self.scope_codes))
            for r in rows
        ]
        self.matrix = np.vstack([self.matrix, block])
        self.page_ids = np.concatenate([self.page_ids, [r["page_id"] for r in rows]])
        self.chunks = np.concatenate([self.chunks, [r["chunk"] for r in rows]])
        self.scopes = np.concatenate([self.scopes, codes])
        self.last_id = int(rows[-1]["id"])

    def nearest(
        self, conn: sqlite3.Connection, text: str, page_filter: PageFilter, limit: int
    ) -> list[tuple[int, float, int]]:
        """(page_id, similarity, chunk) of the best chunks, one per page, best first."""
        np = self.np
        self.refresh(conn)
        query = self.embedder.embed([text])[0]
        matrix, page_ids, chunks = self.matrix, self.page_ids, self.chunks
        if page_filter.scopes:
            wanted = [
                self.scope_codes[(s.workspace, s.project)]
                for s in page_filter.scopes
                if (s.workspace, s.project) in self.scope_codes
            ]
            rows = np.nonzero(np.isin(self.scopes, wanted))[0]
            matrix, page_ids, chunks = matrix[rows], page_ids[rows], chunks[rows]
        if len(page_ids) == 0:
            return []
        sims = matrix @ query
        k = min(len(sims), limit * CHUNKS_PER_HIT)
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.argsort(-sims[top])]
        best: dict[int, tuple[int, float, int]] = {}
        for i in top:
            pid = int(page_ids[i])
            if pid not in best:
                best[pid] = (pid, float(sims[i]), int(chunks[i]))
        return list(best.values())


class VectorSearch:
    """The engine's vector stream."""

    def __init__(self, index: VectorIndex) -> None:
        self.index = index

    def stream(
        self, conn: sqlite3.Connection, text: str, page_filter: PageFilter, limit: int
    ) -> StreamResult:
        found = self.index.nearest(conn, text, page_filter, limit)
        if not found:
            return StreamResult("vectors", [])
        where, params = page_filter.where()
        ids = [pid for pid, _, _ in found]
        sql_text = FILTER_PAGES.format(marks=",".join("?" * len(ids)), where=where)
        allowed = {int(r["id"]) for r in conn.execute(sql_text, (*ids, *params))}
        hits = [
            StreamHit(pid, sim, {"chunk": chunk}) for pid, sim, chunk in found if pid in allowed
        ]
        return StreamResult("vectors", hits[:limit])


def encode(np: Any, matrix: Any) -> list[bytes]:
    """Vectors are stored as float16: half the size, no measurable loss in ranking."""
    return [row.astype(np.float16).tobytes() for row in matrix]
