"""Assembling the retriever a runtime serves, vectors included when configured."""

from __future__ import annotations

import logging
import threading

from ai_memory.config import Config
from ai_memory.retrieval.search import Retriever
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)


def build_retriever(
    config: Config, readers: ReaderPool, writer: Writer, *, background: bool = True
) -> Retriever:
    """With ``embeddings.provider = "local"``: the vector stream, and (when ``background``)
    the embedder thread that keeps vectors up with page writes."""
    if config.embeddings.provider == "none":
        return Retriever.build(readers, writer, config.retrieval)
    from ai_memory.llm.embeddings import load_embedder
    from ai_memory.retrieval.backfill import BackgroundEmbedder
    from ai_memory.retrieval.vectors import VectorIndex, VectorSearch

    embedder = load_embedder(config.embeddings)
    index = VectorIndex(embedder)
    retriever = Retriever.build(readers, writer, config.retrieval, VectorSearch(index))
    retriever.index = index
    if background:
        # Load the stored vectors now, off the request path, so the first search is not
        # the one that pays for reading the whole matrix.
        threading.Thread(
            target=index.refresh_now, args=(readers,), name="ai-memory-vectors", daemon=True
        ).start()
        retriever.background = BackgroundEmbedder(embedder, writer, readers)
        retriever.background.start()
        log.info("embedding pages in the background with %s", embedder.model)
    return retriever
