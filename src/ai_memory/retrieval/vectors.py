"""The vector stream: cosine similarity over page-chunk vectors held in a NumPy matrix.

The matrix is loaded from ``page_vectors`` (only rows of the configured
provider/model/dimension: vectors of another model are stale and ignored) and
topped up incrementally before each query. A page scores by its best chunk.
Rows of retired versions may linger in memory until the next full reload;
every candidate is re-checked against the page filter in SQL, so they never
surface.
"""

from __future__ import annotations

import logging
import sqlite3
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from ai_memory.core.errors import AiMemoryError
from ai_memory.llm.embeddings import Embedder
from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.streams import StreamHit, StreamResult
from ai_memory.store import vectors as sql
from ai_memory.store.readers import ReaderPool

log = logging.getLogger(__name__)

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
        # One matrix per project: a query scans only its projects' rows, with no copying.
        self.blocks: dict[tuple[str, str], _Block] = {}
        self.last_id = 0
        self.count = 0
        self.checked_at = time.monotonic()

    def refresh(self, conn: sqlite3.Connection) -> None:
        with self._lock:
            if time.monotonic() - self.checked_at > RELOAD_CHECK_S:
                max_id, count = conn.execute(sql.STATE, self.identity).fetchone()
                self.checked_at = time.monotonic()
                if (max_id or 0) < self.last_id or int(count) < self.count * 0.8:
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
        by_scope: dict[tuple[str, str], list[sqlite3.Row]] = {}
        for row in rows:
            by_scope.setdefault((row["workspace"], row["project"]), []).append(row)
        for key, group in by_scope.items():
            vectors = np.frombuffer(b"".join(r["vector"] for r in group), dtype=np.float16)
            block = self.blocks.setdefault(key, _Block(np, self.embedder.dim))
            block.append(
                vectors.reshape(len(group), self.embedder.dim).astype(np.float32),
                [r["page_id"] for r in group],
                [r["chunk"] for r in group],
            )
        self.last_id = int(rows[-1]["id"])
        self.count += len(rows)

    def nearest(
        self, conn: sqlite3.Connection, embedding: Future[Any], page_filter: PageFilter, limit: int
    ) -> list[tuple[int, float, int]]:
        """(page_id, similarity, chunk) of the best chunks, one per page, best first."""
        np = self.np
        self.refresh(conn)
        if page_filter.scopes:
            keys = [(s.workspace, s.project) for s in page_filter.scopes]
            blocks = [self.blocks[k] for k in keys if k in self.blocks]
        else:
            blocks = list(self.blocks.values())
        blocks = [b for b in blocks if b.size]
        if not blocks:
            return []
        try:
            query = embedding.result()
        except AiMemoryError as exc:  # a remote embedder that failed: the other streams answer
            log.warning("query embedding failed: %s", exc.message)
            return []
        k = limit * CHUNKS_PER_HIT
        found: list[tuple[float, int, int]] = []
        for block in blocks:
            sims = block.matrix[: block.size] @ query
            top = np.argpartition(-sims, min(k, block.size) - 1)[:k]
            found += [(float(sims[i]), int(block.page_ids[i]), int(block.chunks[i])) for i in top]
        found.sort(reverse=True)
        best: dict[int, tuple[int, float, int]] = {}
        for sim, pid, chunk in found:
            if pid not in best:
                best[pid] = (pid, sim, chunk)
        return list(best.values())


class _Block:
    """A growable matrix of one project's vectors (capacity doubles, appends are cheap)."""

    def __init__(self, np: Any, dim: int) -> None:
        self.np = np
        self.size = 0
        self.matrix = np.zeros((0, dim), dtype=np.float32)
        self.page_ids = np.zeros(0, dtype=np.int64)
        self.chunks = np.zeros(0, dtype=np.int32)

    def append(self, vectors: Any, page_ids: list[int], chunks: list[int]) -> None:
        np = self.np
        needed = self.size + len(vectors)
        if needed > len(self.matrix):
            capacity = max(needed, 2 * len(self.matrix), 1024)
            self.matrix = _grow(np, self.matrix, capacity)
            self.page_ids = _grow(np, self.page_ids, capacity)
            self.chunks = _grow(np, self.chunks, capacity)
        self.matrix[self.size : needed] = vectors
        self.page_ids[self.size : needed] = page_ids
        self.chunks[self.size : needed] = chunks
        self.size = needed


def _grow(np: Any, array: Any, capacity: int) -> Any:
    grown = np.zeros((capacity, *array.shape[1:]), dtype=array.dtype)
    grown[: len(array)] = array
    return grown


class VectorSearch:
    """The engine's vector stream.

    The query is embedded on a helper thread as soon as the search starts, so
    the model runs while the SQL streams do (both release the GIL), and one
    embedding serves the project search and the ``_global`` one.
    """

    def __init__(self, index: VectorIndex) -> None:
        self.index = index
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ai-memory-embed-query")

    def embed(self, text: str) -> Future[Any]:
        return self.pool.submit(self.index.embedder.embed_query, text)

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)

    def stream(
        self, conn: sqlite3.Connection, embedding: Future[Any], page_filter: PageFilter, limit: int
    ) -> StreamResult:
        found = self.index.nearest(conn, embedding, page_filter, limit)
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
