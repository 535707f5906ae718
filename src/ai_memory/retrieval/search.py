"""The one search entry point the HTTP route, the CLI and the MCP tool all call.

``await search(retriever, SearchRequest(...))`` runs the pipeline on a pooled
read connection in a worker thread, then hands reinforcement of the hits to
the writer without waiting for it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import anyio.to_thread

from ai_memory.config import RetrievalSettings
from ai_memory.core.clock import now_iso
from ai_memory.retrieval.engine import Engine, VectorStream
from ai_memory.retrieval.models import SearchRequest, SearchResponse
from ai_memory.retrieval.reinforce import Reinforcer
from ai_memory.retrieval.scope import resolve_scope
from ai_memory.retrieval.stopwords import ENGLISH
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer

if TYPE_CHECKING:
    from ai_memory.retrieval.backfill import BackgroundEmbedder
    from ai_memory.retrieval.vectors import VectorIndex


@dataclass
class Retriever:
    """What a search needs: the readers, the engine and the reinforcer."""

    readers: ReaderPool
    engine: Engine
    reinforcer: Reinforcer
    clock: Callable[[], str] = now_iso
    index: VectorIndex | None = field(default=None, repr=False)
    background: BackgroundEmbedder | None = field(default=None, repr=False)

    def stop(self) -> None:
        """Stop the background embedder (before the writer stops)."""
        if self.background is not None:
            self.background.stop()
        if self.engine.vectors is not None:
            self.engine.vectors.close()

    @classmethod
    def build(
        cls,
        readers: ReaderPool,
        writer: Writer,
        settings: RetrievalSettings,
        vectors: VectorStream | None = None,
        clock: Callable[[], str] = now_iso,
    ) -> Retriever:
        stopwords = frozenset(w.lower() for w in settings.stopwords) or ENGLISH
        engine = Engine(settings, stopwords, vectors)
        reinforcer = Reinforcer(writer, settings.reinforce_interval_s, clock)
        return cls(readers, engine, reinforcer, clock)

    def search_sync(self, request: SearchRequest) -> SearchResponse:
        """The search, for a caller that may block (the async form runs this in a thread)."""
        scope = resolve_scope(request)
        now = self.clock()
        response = self.readers.read(lambda conn: self.engine.run(conn, request, scope, now))
        self._reinforce(response)
        return response

    async def search(self, request: SearchRequest) -> SearchResponse:
        return await anyio.to_thread.run_sync(self.search_sync, request)

    def _reinforce(self, response: SearchResponse) -> None:
        ids = [h.page_id for h in response.hits if not h.superseded]
        ids += [h.page_id for h in response.global_hits if not h.superseded]
        self.reinforcer.bump(ids)


async def search(retriever: Retriever, request: SearchRequest) -> SearchResponse:
    """Search pages (and raw observations when no page matches); see ``SearchRequest``."""
    return await retriever.search(request)
