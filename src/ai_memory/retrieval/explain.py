"""What ``explain=true`` says about one hit: why each stream voted for it."""

from __future__ import annotations

from ai_memory.retrieval.fusion import Fused, Part
from ai_memory.retrieval.models import HitExplain, StreamExplain


def hit_explain(entry: Fused, factor: float, parts: dict[str, float]) -> HitExplain:
    """Per stream its rank, score and contribution; what a session page's one vote
    was made of; the entities, edge, turns and chunk that carried the votes."""
    streams = {
        name: StreamExplain(
            rank=c.rank, score=round(c.score, 6), contribution=round(c.contribution, 6)
        )
        for name, c in entry.streams.items()
    }
    for c in entry.streams.values():
        merged: dict[str, Part] = c.detail.get("parts", {})
        for name, part in merged.items():
            streams[name] = StreamExplain(
                rank=part.rank,
                score=round(part.score, 6),
                contribution=0.0,
                via="session",
                share=round(part.share, 6),
            )
    explain = HitExplain(
        streams=streams,
        rrf=round(entry.rrf, 6),
        authority=round(factor, 4),
        authority_parts=parts,
    )
    for c in entry.streams.values():
        if "entities" in c.detail:
            explain.matched_entities = sorted(set(c.detail["entities"]))
        if "edge" in c.detail:
            explain.edge = c.detail["edge"]
        if "observation_id" in c.detail:
            explain.observation_id = c.detail["observation_id"]
        if "turns" in c.detail:
            explain.turns = [obs.id for obs in c.detail["turns"]]
        if "chunk" in c.detail:
            explain.chunk = c.detail["chunk"]
    return explain
