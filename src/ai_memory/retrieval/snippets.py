"""About 24 words around the best match, or the page's summary when nothing matches."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

WINDOW = 24
_SPLIT = re.compile(r"\s+")
_WORD = re.compile(r"\w+")
_HEADING = re.compile(r"^#+\s.*$", re.MULTILINE)


def snippet(body: str, terms: Iterable[str], frontmatter: dict[str, Any]) -> str:
    words = _SPLIT.split(_HEADING.sub(" ", body).strip())
    stems = {t[:5] for t in terms if t}
    best = _best_window(words, stems)
    if best is None:
        fallback = frontmatter.get("summary") or frontmatter.get("abstract")
        if isinstance(fallback, str) and fallback.strip():
            return _cut(fallback.split())
        return _cut(words)
    start = max(0, best - WINDOW // 3)
    text = " ".join(words[start : start + WINDOW])
    prefix = "… " if start > 0 else ""
    suffix = " …" if start + WINDOW < len(words) else ""
    return prefix + text + suffix


def _best_window(words: list[str], stems: set[str]) -> int | None:
    """Index of the matching word whose window holds the most distinct query stems."""
    if not stems:
        return None
    positions: list[tuple[int, str]] = []
    for index, word in enumerate(words):
        for token in _WORD.findall(word.lower()):
            key = token[:5]
            if key in stems:
                positions.append((index, key))
                break
    if not positions:
        return None
    best_index, best_count = positions[0][0], 0
    for i, (index, _) in enumerate(positions):
        seen: set[str] = set()
        for pos, key in positions[i:]:
            if pos >= index + WINDOW:
                break
            seen.add(key)
        if len(seen) > best_count:
            best_index, best_count = index, len(seen)
            if best_count == len(stems):
                break
    return best_index


def _cut(words: list[str]) -> str:
    text = " ".join(words[:WINDOW])
    return text + (" …" if len(words) > WINDOW else "")
