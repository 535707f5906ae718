"""Assembling the retriever a runtime serves, vectors included when configured."""

from __future__ import annotations

from ai_memory.config import Config
from ai_memory.retrieval.search import Retriever
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer


def build_retriever(config: Config, readers: ReaderPool, writer: Writer) -> Retriever:
    return Retriever.build(readers, writer, config.retrieval)
