"""Reciprocal rank fusion with per-stream weights: score = sum of w / (k + rank).

A session page and the turns of its session are one source of evidence: the
same words, once as the page's text and once as its turns. Before fusion the
two rankings of session pages are fused into one ranking of sessions, which
then votes once (``merge_sessions``); otherwise every session page would
collect two votes for words a curated page can be credited for only once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
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


def fuse(results: list[StreamResult], weights: Mapping[str, float], k: int) -> dict[int, Fused]:
    fused: dict[int, Fused] = {}
    for result in results:
        weight = weights.get(result.name, 0.0)
        if weight <= 0:
            continue
        for rank, hit in enumerate(result.hits, start=1):
            entry = fused.setdefault(hit.page_id, Fused(hit.page_id))
            if result.name in entry.streams:
                continue
            share = weight / (k + rank)
            entry.rrf += share
            entry.streams[result.name] = Contribution(rank, hit.score, share, hit.detail)
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
        kept = []
        for rank, hit in enumerate(result.hits, start=1):
            if not hit.session:
                kept.append(hit)
                continue
            if weight > 0:
                parts = merged.setdefault(hit.page_id, {})
                parts.setdefault(result.name, Part(rank, hit.score, weight / (k + rank)))
                details.setdefault(hit.page_id, {}).update(hit.detail)
        if kept:
            out.append(replace(result, hits=kept))
    if merged:
        ranked = sorted(merged, key=lambda pid: -sum(p.share for p in merged[pid].values()))
        hits = [
            StreamHit(
                pid,
                sum(p.share for p in merged[pid].values()),
                {**details[pid], "parts": merged[pid]},
                session=True,
            )
            for pid in ranked
        ]
        out.append(StreamResult("session", hits))
    return out
