"""Embedding pages: the background embedder of a running server, and ``ai-memory embed``.

Embedding is kept off the write path: a page write commits without waiting
for a model, and the embedder picks new latest versions up shortly after
(polling past a watermark), writing their vectors through the writer.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.llm.embeddings import Embedder, load_embedder
from ai_memory.retrieval.chunks import chunk_page
from ai_memory.retrieval.vectors import encode
from ai_memory.store import vectors as sql
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)

PAGES_PER_ROUND = 16
SLICE = 64  # texts per model call between checks for shutdown
STALE_BATCH = 5000


@dataclass(slots=True)
class BackfillReport:
    model: str
    dim: int
    pages: int = 0
    chunks: int = 0
    stale: int = 0


def pending_pages(
    readers: ReaderPool, embedder: Embedder, after: int, limit: int
) -> list[sqlite3.Row]:
    identity = (embedder.provider, embedder.model, embedder.dim)
    args = (after, *identity, limit)
    return readers.read(lambda conn: conn.execute(sql.PENDING, args).fetchall())


def pending_count(conn: sqlite3.Connection, embedder: Embedder) -> int:
    identity = (embedder.provider, embedder.model, embedder.dim)
    return int(conn.execute(sql.PENDING_COUNT, identity).fetchone()[0])


def vector_status(conn: sqlite3.Connection, embedder: Embedder) -> dict[str, Any]:
    identity = (embedder.provider, embedder.model, embedder.dim)
    counts = conn.execute(sql.COUNTS, identity).fetchone()
    return {
        "provider": embedder.provider,
        "model": embedder.model,
        "dim": embedder.dim,
        "pages": int(counts["pages"]),
        "chunks": int(counts["chunks"]),
        "pending": pending_count(conn, embedder),
        "stale": int(conn.execute(sql.STALE_COUNT, identity).fetchone()[0]),
    }


def embed_rows(
    writer: Writer,
    embedder: Embedder,
    rows: list[sqlite3.Row],
    stopping: Callable[[], bool] = lambda: False,
) -> int:
    """Embed the pages' chunks, store each page's vectors; count chunks.

    ``stopping`` is checked between slices of the model's work, so a shutdown
    never waits for a whole batch of long pages (nothing is stored then).
    """
    import numpy as np

    per_page = [chunk_page(r["title"], r["body"], json.loads(r["frontmatter"])) for r in rows]
    texts = [text for chunks in per_page for text in chunks]
    parts = []
    for start in range(0, len(texts), SLICE):
        if stopping():
            return 0
        parts.append(embedder.embed(texts[start : start + SLICE]))
    matrix = np.vstack(parts) if parts else np.zeros((0, embedder.dim), dtype=np.float32)
    identity = (embedder.provider, embedder.model, embedder.dim)
    now = now_iso()
    batches: list[tuple[int, list[bytes]]] = []
    offset = 0
    for row, chunks in zip(rows, per_page, strict=True):
        batches.append((int(row["id"]), encode(np, matrix[offset : offset + len(chunks)])))
        offset += len(chunks)

    def command(conn: sqlite3.Connection) -> None:
        for page_id, blobs in batches:
            sql.replace_page_vectors(conn, page_id, identity, blobs, now)

    writer.call(command, timeout=None)
    return len(texts)


def backfill(
    writer: Writer,
    readers: ReaderPool,
    config: Config,
    batch: int,
    progress: Callable[[int, int], None] | None = None,
) -> BackfillReport:
    """Remove vectors of other models, then embed every latest page that has none."""
    embedder = load_embedder(config.embeddings)
    identity = (embedder.provider, embedder.model, embedder.dim)
    report = BackfillReport(embedder.model, embedder.dim)
    while True:
        removed = writer.call(lambda conn: sql.delete_stale(conn, identity, STALE_BATCH))
        report.stale += removed
        if removed < STALE_BATCH:
            break
    total = readers.read(lambda conn: pending_count(conn, embedder))
    after = 0
    pages_per_round = max(1, batch // 4)
    while True:
        rows = pending_pages(readers, embedder, after, pages_per_round)
        if not rows:
            break
        report.chunks += embed_rows(writer, embedder, rows)
        report.pages += len(rows)
        after = int(rows[-1]["id"])
        if progress:
            progress(report.pages, total)
    return report


class BackgroundEmbedder:
    """A thread that embeds new latest page versions shortly after they are written."""

    def __init__(
        self, embedder: Embedder, writer: Writer, readers: ReaderPool, interval_s: float = 1.0
    ) -> None:
        self.embedder = embedder
        self.writer = writer
        self.readers = readers
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.watermark = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ai-memory-embedder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                done = self.round()
            except Exception:
                log.exception("background embedding failed; retrying later")
                done = 0
            if not done:
                self._stop.wait(self.interval_s)

    def round(self) -> int:
        """Embed one batch of pending pages; the number embedded (0: nothing to do)."""
        rows = pending_pages(self.readers, self.embedder, self.watermark, PAGES_PER_ROUND)
        if not rows:
            return 0
        if not embed_rows(self.writer, self.embedder, rows, self._stop.is_set):
            return 0
        self.watermark = int(rows[-1]["id"])
        return len(rows)
