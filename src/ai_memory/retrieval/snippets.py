"""About 24 words around the best match, or the page's summary when nothing matches."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

WINDOW = 24
BEFORE = 8  # words shown before the first match of the window
STEM = 5  # a query word matches any text word sharing its first five letters
SPAN_CHARS = 160  # about WINDOW words of prose: how far one window reaches


def stems_of(terms: Iterable[str]) -> list[str]:
    """The query words' stems, longest first: what every snippet of one query looks for."""
    return sorted({t[:STEM] for t in terms if t.strip()}, key=len, reverse=True)


def cut_snippet(
    body: str,
    stems: list[str],
    frontmatter: Mapping[str, Any] | str,
    *,
    window: int = WINDOW,
) -> str:
    """About ``window`` words around the best match of ``stems`` (:func:`stems_of`, worked
    out once for all of a query's snippets). ``frontmatter`` may be its stored JSON:
    decoded only when no word matches."""
    text = _without_headings(body)
    at = _best_match(text.lower(), stems)
    if at is None:
        meta = json.loads(frontmatter) if isinstance(frontmatter, str) else frontmatter
        fallback = meta.get("summary") or meta.get("abstract")
        if isinstance(fallback, str) and fallback.strip():
            return _cut(fallback.split(), window)
        return _cut(text[: SPAN_CHARS * 4].split(), window, more=len(text) > SPAN_CHARS * 4)
    head = text[max(0, at - BEFORE * 12) : at]
    head_words = before = head.split()
    if at - BEFORE * 12 > 0 and before and not head[0].isspace():
        before = before[1:]  # the slice began inside a word
    before = before[-BEFORE:]
    tail = text[at : at + SPAN_CHARS * 3 * window // WINDOW]
    wanted = window - len(before)
    # Split no further than the words shown: a last part left over means more words.
    tail_words = tail.split(None, wanted) if wanted >= 0 else tail.split()
    after = tail_words[:wanted]
    earlier = at > len(head) or len(head_words) > len(before)
    later = len(tail_words) > len(after) or bool(text[at + len(tail) :].strip())
    return ("… " if earlier else "") + " ".join(before + after) + (" …" if later else "")


def _without_headings(body: str) -> str:
    """Heading lines replaced by a space: ``re.sub(r"^#+\\s.*$", " ", body, flags=re.M)``.

    The same result visiting only the lines that start with '#'; the pattern
    tried every offset of the body, which was most of a snippet's cost. A '#' is
    looked for alone: ``find`` of a one-character string skips through the text,
    where ``"\\n#"`` was compared at almost every offset.
    """
    size = len(body)
    parts: list[str] = []
    kept = 0  # body is copied up to here
    at = body.find("#")
    while at >= 0:
        if at == 0 or body[at - 1] == "\n":  # a line starts here
            hashes = at
            while hashes < size and body[hashes] == "#":
                hashes += 1
            if hashes < size and body[hashes].isspace():
                end = body.find("\n", hashes + 1)
                end = size if end < 0 else end
                parts += [body[kept:at], " "]
                kept = at = end
        at = body.find("#", at + 1)
    if not parts:
        return body
    parts.append(body[kept:])
    return "".join(parts)


def _best_match(lowered: str, stems: list[str]) -> int | None:
    """Offset of the match whose window holds the most distinct query stems."""
    if not stems:
        return None
    if len(stems) == 1:  # the first match holds every stem: the rest need not be found
        return _first_start(lowered, stems[0])
    positions = _matches(lowered, stems)
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


def _matches(lowered: str, stems: list[str]) -> list[tuple[int, str]]:
    """Where a stem starts a word, left to right, never overlapping; longest stem first.

    What ``re.finditer`` of the alternation ``(?<!\\w)(stem|...)`` would find, with
    ``str.find`` instead of a pattern compiled for every query (that took longer
    than the search it served).
    """
    found: dict[int, str] = {}
    for stem in stems:  # longest first: at one offset, the longest stem wins
        at = lowered.find(stem)
        while at >= 0:
            if at not in found:
                before = lowered[at - 1] if at else " "  # _is_word, inlined: the hot loop
                if not (before.isalnum() or before == "_"):
                    found[at] = stem
            at = lowered.find(stem, at + 1)
    out: list[tuple[int, str]] = []
    end = 0
    for at in sorted(found):
        if at >= end:
            out.append((at, found[at]))
            end = at + len(found[at])
    return out


def starts_a_word(lowered: str, stem: str) -> bool:
    """Whether ``stem`` starts a word of ``lowered``: ``re.search(r"(?<!\\w)" + re.escape(stem),
    lowered)``, without compiling a pattern per query word. The loop of :func:`_matches`,
    written out: as a generator shared with it, this took twice as long, and turn choice
    asks it for every shown turn and query word."""
    at = lowered.find(stem)
    while at >= 0:
        if at == 0 or not _is_word(lowered[at - 1]):
            return True
        at = lowered.find(stem, at + 1)
    return False


def _first_start(lowered: str, stem: str) -> int | None:
    """Where ``stem`` first starts a word (the loop of :func:`starts_a_word` again)."""
    at = lowered.find(stem)
    while at >= 0:
        if at == 0 or not _is_word(lowered[at - 1]):
            return at
        at = lowered.find(stem, at + 1)
    return None


def _is_word(char: str) -> bool:
    """``\\w`` of a ``str`` pattern."""
    return char.isalnum() or char == "_"


def _cut(words: list[str], window: int, more: bool = False) -> str:
    text = " ".join(words[:window])
    return text + (" …" if more or len(words) > window else "")
