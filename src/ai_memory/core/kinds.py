"""Page kinds and tiers, and the defaults a page's folder implies."""

from __future__ import annotations

from typing import Literal, get_args

Kind = Literal[
    "session", "concept", "decision", "gotcha", "procedure", "rule", "slot", "note", "lint"
]
Tier = Literal["working", "episodic", "semantic", "procedural"]

KINDS: frozenset[str] = frozenset(get_args(Kind))
TIERS: frozenset[str] = frozenset(get_args(Tier))

_FOLDER_KINDS: dict[str, str] = {
    "sessions": "session",
    "concepts": "concept",
    "decisions": "decision",
    "gotchas": "gotcha",
    "procedures": "procedure",
    "_rules": "rule",
    "_slots": "slot",
    "_lint": "lint",
}

_KIND_TIERS: dict[str, str] = {
    "session": "episodic",
    "concept": "semantic",
    "decision": "semantic",
    "gotcha": "semantic",
    "procedure": "procedural",
    "rule": "procedural",
    "slot": "working",
    "note": "semantic",
    "lint": "working",
}


def kind_for_path(path: str) -> str:
    """The kind a page gets from its top folder when its frontmatter names none."""
    head, _, rest = path.partition("/")
    return _FOLDER_KINDS.get(head, "note") if rest else "note"


def tier_for_kind(kind: str) -> str:
    return _KIND_TIERS.get(kind, "semantic")


def pinned_by_path(path: str) -> bool:
    """Slots are pinned automatically: they hold what every session should see."""
    return path.startswith("_slots/")


# One notion of a rule page for every surface: filed under ``_rules/`` or of kind ``rule``.
RULE_PAGE_SQL = "(path LIKE '\\_rules/%' ESCAPE '\\' OR kind = 'rule')"
