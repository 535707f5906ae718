"""The search pipeline on one read connection: streams, fusion, authority, snippets."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from ai_memory.config import RetrievalSettings
from ai_memory.retrieval.authority import HIGH, LOW
from ai_memory.retrieval.explain import hit_explain
from ai_memory.retrieval.filters import PageFilter
from ai_memory.retrieval.fusion import Fused, fuse, merge_sessions
from ai_memory.retrieval.inlist import marks
from ai_memory.retrieval.models import (
    Hit,
    QueryExplain,
    RawHit,
    SearchRequest,
    SearchResponse,
    StreamSummary,
)
from ai_memory.retrieval.query import PreparedQuery, prepare
from ai_memory.retrieval.rows import (
    EXPIRES_AT,
    ID,
    IS_LATEST,
    KIND,
    PATH,
    PINNED,
    PROJECT,
    TIER,
    TITLE,
    VERSION,
    WORKSPACE,
    PageRows,
)
from ai_memory.retrieval.scope import SearchScope
from ai_memory.retrieval.scoring import scored
from ai_memory.retrieval.snippets import cut_snippet, stems_of
from ai_memory.retrieval.streams import StreamResult
from ai_memory.retrieval.streams.entities import entity_stream
from ai_memory.retrieval.streams.evidence import (
    Observation,
    evidence_stream,
    match_observations,
    observation_bodies,
)
from ai_memory.retrieval.streams.graph import graph_stream
from ai_memory.retrieval.streams.history import history_stream
from ai_memory.retrieval.streams.lexical import cjk_stream, fts_stream
from ai_memory.retrieval.terms import TermStats, page_count
from ai_memory.retrieval.turns import readable_observations, session_turns
from ai_memory.store.acting import acting

BODIES = "SELECT id, body, frontmatter FROM pages WHERE id IN ({marks})"
HAS_PAGES = "SELECT 1 FROM pages WHERE workspace = ? AND project = ? AND is_latest = 1 LIMIT 1"
GRAPH_SEEDS = 5
GLOBAL_LIMIT = 5
RAW_SNIPPET_WORDS = 40


class VectorStream(Protocol):
    """The optional vector stream (see ``retrieval.vectors``)."""

    def embed(self, text: str) -> Future[Any]: ...

    def stream(
        self, conn: sqlite3.Connection, embedding: Future[Any], page_filter: PageFilter, limit: int
    ) -> StreamResult: ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Engine:
    settings: RetrievalSettings
    stopwords: Collection[str]
    vectors: VectorStream | None = None
    terms: TermStats = field(default_factory=TermStats)

    @property
    def weights(self) -> dict[str, float]:
        s = self.settings
        return {
            "fts": s.weight_fts,
            "cjk": s.weight_fts,
            "history": s.weight_fts,
            "entities": s.weight_entities,
            "graph": s.weight_graph,
            "evidence": s.weight_evidence,
            "session": max(s.weight_fts, s.weight_evidence),
            "vectors": s.weight_vectors if self.vectors is not None else 0.0,
        }

    def run(
        self, conn: sqlite3.Connection, request: SearchRequest, scope: SearchScope, now: str
    ) -> SearchResponse:
        started = time.perf_counter()
        weights = self.weights  # a new dict per read: read once
        embedding = None
        if self.vectors is not None and self.settings.weight_vectors > 0 and request.query.strip():
            embedding = self.vectors.embed(request.query)
        prepared = prepare(request.query, self.stopwords)
        pages = page_count(conn)
        words = prepared.words if prepared.mode == "words" else ()
        query = prepared.without(self.terms.common(conn, words, pages))
        page_filter = self._filter(request, scope.main, now)
        seen = PageRows()
        ranked = self._rank(
            conn, query, page_filter, request, request.limit, pages, seen, weights, embedding
        )
        global_hits: list[Hit] = []
        if scope.shared is not None and not query.empty and _has_pages(conn, scope.shared):
            shared_filter = self._filter(request, (scope.shared,), now)
            limit = min(request.limit, GLOBAL_LIMIT)
            shared = self._rank(
                conn, query, shared_filter, request, limit, pages, seen, weights, embedding
            )
            global_hits = shared.hits
        raw_hits = [] if ranked.hits else _raw_hits(conn, ranked.observations, request.limit)
        total_ms = (time.perf_counter() - started) * 1000
        explain = None
        if request.explain:
            explain = QueryExplain(
                fts=query.fts,
                mode=query.mode,
                words=list(query.words),
                dropped=sorted(set(prepared.words) - set(query.words)),
                active_streams=[r.name for r in ranked.results if weights.get(r.name)],
                streams={
                    r.name: StreamSummary(
                        ms=round(r.ms, 3),
                        candidates=len(r.hits),
                        weight=weights.get(r.name, 0.0),
                        note=r.note,
                    )
                    for r in ranked.results
                },
            )
        return SearchResponse(
            query=request.query,
            hits=ranked.hits,
            raw_hits=raw_hits,
            global_hits=global_hits,
            scope=scope.describe(),
            timings={"total_ms": round(total_ms, 3)},
            explain=explain,
        )

    def _filter(self, request: SearchRequest, scopes: tuple[Any, ...], now: str) -> PageFilter:
        return PageFilter(
            scopes=scopes,
            kind=request.kind,
            tier=request.tier,
            tag=request.tag,
            path_prefix=request.path_prefix,
            include_expired=request.include_expired,
            as_of=request.as_of,
            now=now,
        )

    def _rank(
        self,
        conn: sqlite3.Connection,
        query: PreparedQuery,
        page_filter: PageFilter,
        request: SearchRequest,
        limit: int,
        pages: int,
        seen: PageRows,
        weights: dict[str, float],
        embedding: Future[Any] | None = None,
    ) -> _Ranked:
        n = max(self.settings.candidates, limit)
        results: list[StreamResult] = []
        observations: list[Observation] = []
        if query.empty:
            return _Ranked([], results, observations)

        def timed(run: Callable[[], StreamResult]) -> StreamResult:
            t = time.perf_counter()
            result = run()
            result.ms = (time.perf_counter() - t) * 1000
            results.append(result)
            return result

        tw = self.settings.title_weight
        fts = timed(
            lambda: fts_stream(
                conn, query, page_filter, title_weight=tw, limit=n, pages=pages, seen=seen
            )
        )
        if query.cjk_match or query.cjk_like:
            timed(lambda: cjk_stream(conn, query, page_filter, title_weight=tw, limit=n))
        entities = timed(lambda: entity_stream(conn, query, page_filter, limit=n, seen=seen))

        def evidence() -> StreamResult:
            observations.extend(match_observations(conn, query, page_filter, n * 2))
            return evidence_stream(conn, observations, page_filter, limit=n, seen=seen)

        timed(evidence)
        if self.vectors is not None and embedding is not None:
            vectors = self.vectors
            timed(lambda: vectors.stream(conn, embedding, page_filter, n))
        if request.include_superseded or request.as_of:
            timed(lambda: history_stream(conn, query, page_filter, limit=n))
        seeds = list(
            dict.fromkeys(
                [h.page_id for h in fts.top(GRAPH_SEEDS)]
                + [h.page_id for h in entities.top(GRAPH_SEEDS)]
            )
        )
        timed(lambda: graph_stream(conn, seeds, page_filter, limit=n, seen=seen))
        k = self.settings.rrf_k
        fused = fuse(merge_sessions(results, weights, k), weights, k)
        hits = self._hits(conn, fused, query, request, page_filter.now, limit, seen)
        return _Ranked(hits, results, observations)

    def _hits(
        self,
        conn: sqlite3.Connection,
        fused: dict[int, Fused],
        query: PreparedQuery,
        request: SearchRequest,
        now: str,
        limit: int,
        seen: PageRows,
    ) -> list[Hit]:
        if not fused:
            return []
        ids = _contenders(fused, limit) if not request.pin_first else list(fused)
        rows = seen.read(conn, ids)
        weight = self.settings.feedback_weight
        top = scored(conn, fused, rows, pin_first=request.pin_first, feedback_weight=weight)
        top = top[:limit]
        terms = list(query.words)
        turns = session_turns(conn, [fused[s[1]] for s in top], terms)
        # A hit with turns shows its best turn: only the others need their page's body.
        bodies = _bodies(conn, [s[1] for s in top if not turns.get(s[1])])
        stems = stems_of(terms)
        hits = []
        for _, page_id, score, row, factor, parts in top:
            expires = row[EXPIRES_AT]
            stored = bodies.get(page_id)
            hit = Hit(
                page_id=row[ID],
                version=row[VERSION],
                workspace=row[WORKSPACE],
                project=row[PROJECT],
                path=row[PATH],
                title=row[TITLE],
                kind=row[KIND],
                tier=row[TIER],
                snippet=cut_snippet(stored[0], stems, stored[1]) if stored else "",
                turns=turns.get(page_id),
                score=round(score, 6),
                pinned=True if row[PINNED] else None,
                superseded=True if not row[IS_LATEST] else None,
                expired=True if expires and str(expires) <= now else None,
            )
            if hit.turns:
                hit.snippet = hit.turns[0].snippet  # where the words are, not the page head
            if request.explain:
                hit.explain = hit_explain(fused[page_id], factor, parts)
            hits.append(hit)
        return hits


@dataclass(slots=True)
class _Ranked:
    hits: list[Hit]
    results: list[StreamResult]
    observations: list[Observation]


def _contenders(fused: dict[int, Fused], limit: int) -> list[int]:
    """Candidates that can still reach the top ``limit`` whatever their authority.

    The factor lies in [LOW, HIGH], so a page whose fused score times HIGH is
    below the limit-th best fused score times LOW can never rank among the top.
    """
    ordered = sorted(fused.values(), key=lambda f: -f.rrf)
    if len(ordered) <= limit:
        return [f.page_id for f in ordered]
    floor = ordered[limit - 1].rrf * LOW / HIGH
    return [f.page_id for f in ordered if f.rrf >= floor]


def _bodies(conn: sqlite3.Connection, ids: list[int]) -> dict[int, tuple[str, str]]:
    if not ids:
        return {}
    sql = BODIES.format(marks=marks(len(ids)))
    return {int(r["id"]): (r["body"], r["frontmatter"]) for r in conn.execute(sql, ids)}


def _has_pages(conn: sqlite3.Connection, scope: Any) -> bool:
    return conn.execute(HAS_PAGES, (scope.workspace, scope.project)).fetchone() is not None


def _raw_hits(
    conn: sqlite3.Connection, observations: list[Observation], limit: int
) -> list[RawHit]:
    chosen = list({obs.id: obs for obs in observations}.values())
    mine = readable_observations(conn, [obs.id for obs in chosen], acting())  # raw: owner's only
    chosen = [obs for obs in chosen if obs.id in mine][:limit]
    bodies = observation_bodies(conn, [obs.id for obs in chosen])
    out: list[RawHit] = []
    for obs in chosen:
        words = bodies.get(obs.id, "").split()
        text = " ".join(words[:RAW_SNIPPET_WORDS]) + (
            " …" if len(words) > RAW_SNIPPET_WORDS else ""
        )
        out.append(
            RawHit(
                observation_id=obs.id,
                workspace=obs.workspace,
                project=obs.project,
                session_id=obs.session_id,
                kind=obs.kind,
                snippet=text,
                created_at=obs.created_at,
            )
        )
        if len(out) >= limit:
            break
    return out
