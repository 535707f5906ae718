"""Read commands without a server: the same reads, on a read-only connection to the index.

SQLite in WAL mode lets a reader open the database while nothing (or a server)
writes it; ``mode=ro`` makes sure this path never writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from typing import Any, TypeVar

from ai_memory.cli.output import err, styled
from ai_memory.config import Config
from ai_memory.core.errors import NotInitialised, Unavailable

T = TypeVar("T")


@contextmanager
def read_only(config: Config) -> Iterator[sqlite3.Connection]:
    if not config.db_path.exists():
        raise NotInitialised(f"{config.data_dir} is not initialised; run `ai-memory init`")
    uri = f"file:{config.db_path}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True, timeout=5)) as conn:
        conn.row_factory = sqlite3.Row
        yield conn


def or_local(
    config: Config, remote: Callable[[], T], local: Callable[[sqlite3.Connection], T]
) -> T:
    """``remote()``; when no server answers, say so once and run ``local`` on the index."""
    try:
        return remote()
    except Unavailable as exc:
        err.print(styled("note:", "yellow"), f"{exc.message}; reading the index read-only")
    with read_only(config) as conn:
        return local(conn)


def page_local(conn: sqlite3.Connection, ref: Any, version: int | None) -> dict[str, Any]:
    from ai_memory.wiki.page_reads import read_page

    return read_page(conn, ref, version, None)


def history_local(conn: sqlite3.Connection, ref: Any) -> dict[str, Any]:
    from ai_memory.wiki.page_reads import history

    return {"path": ref.path, "versions": history(conn, ref)}


def search_local(conn: sqlite3.Connection, config: Config, params: dict[str, Any]) -> Any:
    """The same ranking as the server's search, over the index alone: no vectors (no
    embedder runs here) and no reinforcement (nothing is written)."""
    from ai_memory.core.clock import now_iso
    from ai_memory.retrieval.engine import Engine
    from ai_memory.retrieval.models import SearchRequest
    from ai_memory.retrieval.scope import resolve_scope
    from ai_memory.retrieval.stopwords import ENGLISH

    fields = {k: v for k, v in params.items() if k not in ("q", "scope", "global")}
    flags = {k: v == "true" for k, v in fields.items() if v == "true"}
    request = SearchRequest.parse(
        {
            **fields,
            **flags,
            "query": params["q"],
            "scopes": params.get("scope"),
            "global": params.get("global") == "true",
        }
    )
    settings = config.retrieval
    stopwords = frozenset(w.lower() for w in settings.stopwords) or ENGLISH
    engine = Engine(settings, stopwords, None)
    return engine.run(conn, request, resolve_scope(request), now_iso()).to_dict()
