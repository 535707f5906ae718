"""The one search entry point the HTTP route, the CLI and the MCP tool all call.

``await search(retriever, SearchRequest(...))`` runs the pipeline on a pooled
read connection in a worker thread and notes its hits for reinforcement, which
reaches the writer a moment later off the answer's path. ``search_sync`` hands
the bump to the writer before it returns (a caller that then writes sees it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ai_memory.config import RetrievalSettings
from ai_memory.core.clock import now_iso
from ai_memory.core.principal import Principal
from ai_memory.retrieval.engine import Engine, VectorStream
from ai_memory.retrieval.models import SearchRequest, SearchResponse
from ai_memory.retrieval.reinforce import Reinforcer
from ai_memory.retrieval.scope import resolve_scope, restrict
from ai_memory.retrieval.stopwords import ENGLISH
from ai_memory.store.acting import acting
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
        """Stop the background embedder and hand over noted hits (before the writer stops)."""
        self.reinforcer.close()
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

    def search_sync(self, request: SearchRequest, *, defer: bool = False) -> SearchResponse:
        """The search, for a caller that may block; the bump is queued when it returns,
        or with ``defer`` noted for later, as the server's search does."""
        response = self._run(request, acting())
        if defer:
            self.reinforcer.later(_shown(response))
        else:
            self.reinforcer.bump(_shown(response))
        return response

    async def search(self, request: SearchRequest) -> SearchResponse:
        """The search in a worker thread; its hits are reinforced off the answer's path."""
        response = await self.search_unreinforced(request)
        self.reinforcer.later(_shown(response))
        return response

    async def search_unreinforced(self, request: SearchRequest) -> SearchResponse:
        """The search alone: no hit counts as read, so the caller decides which did
        (a rerank shows fewer hits than it fetched; a consolidation is no agent's read)."""
        return await self.readers.on_thread(self._run, request, acting())

    def _run(self, request: SearchRequest, who: Principal) -> SearchResponse:
        """Search as ``who``: the projects they may not read are left out first."""
        scope = resolve_scope(request)
        now = self.clock()
        return self.readers.read(
            lambda conn: self.engine.run(conn, request, restrict(scope, conn, who), now)
        )


def _shown(response: SearchResponse) -> list[int]:
    """The current versions a search showed: what reinforcement counts as read."""
    ids = [h.page_id for h in response.hits if not h.superseded]
    return ids + [h.page_id for h in response.global_hits if not h.superseded]


async def search(retriever: Retriever, request: SearchRequest) -> SearchResponse:
    """Search pages (and raw observations when no page matches); see ``SearchRequest``."""
    return await retriever.search(request)
