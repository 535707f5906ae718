"""Reciprocal rank fusion with per-stream weights: score = sum of w / (k + rank)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ai_memory.retrieval.streams import StreamResult


@dataclass(slots=True)
class Contribution:
    rank: int
    score: float
    contribution: float
    detail: dict[str, Any]


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
