"""About 24 words around the best match, or the page's summary when nothing matches."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Any

WINDOW = 24
BEFORE = 8  # words shown before the first match of the window
STEM = 5  # a query word matches any text word sharing its first five letters
SPAN_CHARS = 160  # about WINDOW words of prose: how far one window reaches
_HEADING = re.compile(r"^#+\s.*$", re.MULTILINE)


def snippet(
    body: str, terms: Iterable[str], frontmatter: dict[str, Any], *, window: int = WINDOW
) -> str:
    text = _HEADING.sub(" ", body)
    stems = sorted({t[:STEM] for t in terms if t.strip()}, key=len, reverse=True)
    at = _best_match(text.lower(), stems)
    if at is None:
        fallback = frontmatter.get("summary") or frontmatter.get("abstract")
        if isinstance(fallback, str) and fallback.strip():
            return _cut(fallback.split(), window)
        return _cut(text[: SPAN_CHARS * 4].split(), window, more=len(text) > SPAN_CHARS * 4)
    head = text[max(0, at - BEFORE * 12) : at]
    before = head.split()
    if at - BEFORE * 12 > 0 and before and not head[0].isspace():
        before = before[1:]  # the slice began inside a word
    before = before[-BEFORE:]
    tail = text[at : at + SPAN_CHARS * 3 * window // WINDOW]
    after = tail.split()[: window - len(before)]
    earlier = at > len(head) or len(head.split()) > len(before)
    later = len(tail.split()) > len(after) or bool(text[at + len(tail) :].strip())
    return ("… " if earlier else "") + " ".join(before + after) + (" …" if later else "")


def _best_match(lowered: str, stems: list[str]) -> int | None:
    """Offset of the match whose window holds the most distinct query stems."""
    if not stems:
        return None
    positions = [(m.start(), m.group(1)) for m in _pattern(tuple(stems)).finditer(lowered)]
    if not positions:
        return None
    best_at, best_count = positions[0][0], 0
    for i, (at, _) in enumerate(positions):
        seen: set[str] = set()
        for pos, key in positions[i:]:
            if pos >= at + SPAN_CHARS:
                break
            seen.add(key)
        if len(seen) > best_count:
            best_at, best_count = at, len(seen)
            if best_count == len(stems):
                break
    return best_at


@functools.lru_cache(maxsize=256)
def _pattern(stems: tuple[str, ...]) -> re.Pattern[str]:
    """One compiled pattern per query, not one per hit and turn."""
    return re.compile(r"(?<!\w)(" + "|".join(re.escape(s) for s in stems) + ")")


def _cut(words: list[str], window: int, more: bool = False) -> str:
    text = " ".join(words[:window])
    return text + (" …" if more or len(words) > window else "")
