"""The bounded authority multiplier: how much a page's standing adjusts its fused score."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

LOW, HIGH = 0.55, 1.50

KIND = {
    "rule": 1.3,
    "decision": 1.25,
    "procedure": 1.15,
    "gotcha": 1.15,
    "concept": 1.1,
    "slot": 1.05,
    "note": 1.0,
    "session": 0.9,
    "lint": 0.7,
}
TIER = {"procedural": 1.05, "semantic": 1.0, "working": 1.0, "episodic": 0.95}
TAGS = {"canonical": 1.2, "historical": 0.8, "superseded": 0.7, "deprecated": 0.7}
PINNED = 1.15
OLDER_VERSION = 0.8
FEEDBACK = {"helpful": 0.05, "not_helpful": -0.08, "stale": -0.1, "wrong": -0.15}
FEEDBACK_RANGE = (0.6, 1.2)


def authority(
    *,
    kind: str,
    tier: str,
    pinned: bool,
    tags: Iterable[str],
    feedback: Mapping[str, int],
    older_version: bool = False,
    feedback_weight: float = 1.0,
) -> tuple[float, dict[str, float]]:
    """The clamped factor and the parts it is made of (for explain).

    ``feedback_weight`` scales the feedback steps; at 0 feedback does not rank at all.
    """
    parts: dict[str, float] = {
        "kind": KIND.get(kind, 1.0),
        "tier": TIER.get(tier, 1.0),
    }
    if pinned:
        parts["pinned"] = PINNED
    for tag in tags:
        factor = TAGS.get(tag.lower())
        if factor is not None:
            parts[f"tag:{tag.lower()}"] = factor
    if feedback and feedback_weight:
        delta = feedback_weight * sum(FEEDBACK.get(s, 0.0) * n for s, n in feedback.items())
        parts["feedback"] = min(max(1.0 + delta, FEEDBACK_RANGE[0]), FEEDBACK_RANGE[1])
    if older_version:
        parts["older_version"] = OLDER_VERSION
    product = 1.0
    for value in parts.values():
        product *= value
    return min(max(product, LOW), HIGH), parts
