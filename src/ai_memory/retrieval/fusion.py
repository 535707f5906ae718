"""Reciprocal rank fusion with per-stream weights: score = sum of w / (k + rank).

A session page and the turns of its session are one source of evidence: the
same words, once as the page's text and once as its turns. Before fusion the
two rankings of session pages are fused into one ranking of sessions, which
then votes once (``merge_sessions``); otherwise every session page would
collect two votes for words a curated page can be credited for only once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ai_memory.retrieval.streams import StreamHit, StreamResult


@dataclass(slots=True)
class Contribution:
    rank: int
    score: float
    contribution: float
    detail: dict[str, Any]


@dataclass(slots=True)
class Part:
    """Where one stream placed a session page before its votes were merged."""

    rank: int
    score: float
    share: float


@dataclass(slots=True)
class Fused:
    page_id: int
    rrf: float = 0.0
    streams: dict[str, Contribution] = field(default_factory=dict)


SCORED = ("fts", "evidence")  # BM25 streams: lower is better, top score first
GAMMA = 0.5


def strength(result: StreamResult) -> list[float]:
    """How close each hit's BM25 score is to the stream's best, in (0, 1].

    Rank alone says a page matching one of three words at rank 2 is almost as
    good as the page matching all three at rank 1; the score knows better.
    """
    if result.name not in SCORED or not result.hits:
        return [1.0] * len(result.hits)
    top = min(hit.score for hit in result.hits)
    if top >= 0:
        return [1.0] * len(result.hits)
    return [
        1.0 if hit.detail.get("exact_title") else (min(hit.score, 0.0) / top) ** GAMMA
        for hit in result.hits
    ]


def fuse(results: list[StreamResult], weights: Mapping[str, float], k: int) -> dict[int, Fused]:
    fused: dict[int, Fused] = {}
    for result in results:
        name = result.name
        weight = weights.get(name, 0.0)
        if weight <= 0:
            continue
        factors = result.strength or [1.0] * len(result.hits)
        for rank, (hit, factor) in enumerate(zip(result.hits, factors, strict=True), start=1):
            page_id = hit.page_id
            entry = fused.get(page_id)
            if entry is None:
                entry = fused[page_id] = Fused(page_id, 0.0, {})
            elif name in entry.streams:
                continue
            share = weight * factor / (k + rank)
            entry.rrf += share
            entry.streams[name] = Contribution(rank, hit.score, share, hit.detail)
    return fused


SESSION_SOURCES = ("fts", "evidence")


def merge_sessions(
    results: list[StreamResult], weights: Mapping[str, float], k: int
) -> list[StreamResult]:
    """Session pages leave the page-text and turn streams for one ``session`` stream.

    Its ranking is the fusion of the two (so turns and page text still agree or
    disagree as before); other pages keep their page-text ranks.
    """
    merged: dict[int, dict[str, Part]] = {}
    details: dict[int, dict[str, Any]] = {}
    out: list[StreamResult] = []
    for result in results:
        if result.name not in SESSION_SOURCES:
            out.append(result)
            continue
        weight = weights.get(result.name, 0.0)
        factors = strength(result)
        kept, kept_factors = [], []
        for rank, (hit, factor) in enumerate(zip(result.hits, factors, strict=True), start=1):
            if not hit.session:
                kept.append(hit)
                kept_factors.append(factor)
                continue
            if weight > 0:
                parts = merged.setdefault(hit.page_id, {})
                share = weight * factor / (k + rank)
                parts.setdefault(result.name, Part(rank, hit.score, share))
                details.setdefault(hit.page_id, {}).update(hit.detail)
        if kept:
            # ``dataclasses.replace`` would do, at several times the cost of the call
            out.append(StreamResult(result.name, kept, result.ms, result.note, kept_factors))
    if merged:
        totals = {pid: sum(p.share for p in parts.values()) for pid, parts in merged.items()}
        ranked = sorted(totals, key=lambda pid: -totals[pid])
        hits = [
            StreamHit(pid, totals[pid], {**details[pid], "parts": merged[pid]}, session=True)
            for pid in ranked
        ]
        # The session vote's strength is its fused score against the best session's.
        best = hits[0].score
        out.append(StreamResult("session", hits, strength=[h.score / best for h in hits]))
    return out
