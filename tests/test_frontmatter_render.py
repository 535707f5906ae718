"""Frontmatter is written by libyaml when it writes exactly what PyYAML would, else by PyYAML."""

from __future__ import annotations

import random
import string

import yaml

from ai_memory.wiki import yaml_dump

TRICKY = [
    "",
    " lead",
    "trail ",
    "true",
    "null",
    "~",
    "- item",
    "a: b",
    "#comment",
    "'single'",
    '"double"',
    "1e3",
    "0x1F",
    "---",
    "...",
    "é and 日本語",
    "tab\there",
    "line\nbreak",
    "emoji 🙂",
    "nbsp\xa0here",
    "sep\u2028here",
    "bom\ufeff",
    "nel\x85",
    "ctrl\x07",
]


def _value(rng: random.Random, depth: int = 0) -> object:
    roll = rng.random()
    if depth < 2 and roll < 0.15:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if depth < 2 and roll < 0.25:
        return {rng.choice(TRICKY) or "k": _value(rng, depth + 1) for _ in range(rng.randrange(3))}
    if roll < 0.35:
        return rng.choice([True, False, None, rng.randrange(-(10**6), 10**6), rng.random()])
    if roll < 0.6:
        return rng.choice(TRICKY)
    chars = string.printable[:95] + "é日本🙂\t\n\xa0\u2028"
    return "".join(rng.choice(chars) for _ in range(rng.randrange(60)))


def test_every_frontmatter_renders_as_pyyaml_renders_it() -> None:
    rng = random.Random(15)
    for _ in range(3000):
        data = {key: _value(rng) for key in ("title", "kind", "tags", "summary", "extra")}
        assert yaml_dump.dump(data) == yaml_dump.dump_with(data, yaml.SafeDumper), data


def test_libyaml_is_used_for_ordinary_frontmatter() -> None:
    ordinary = {"title": "Writer queue", "tags": ["perf", "日本"], "pinned": False, "n": 3}
    assert yaml_dump._alike(ordinary)
    assert not yaml_dump._alike({"title": "two\nlines"})
    assert not yaml_dump._alike({"title": "emoji 🙂"})
