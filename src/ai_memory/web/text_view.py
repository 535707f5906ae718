"""Captured and page text shown as plain text: markdown syntax dropped, query words marked.

Snippets and observations are untrusted: every piece is escaped, and the only
markup added is ``<mark>`` around words that match the query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from markupsafe import Markup, escape

STEM = 5  # as retrieval matches: a word sharing the query word's first five letters
_FENCE = re.compile(r"^\s*(```|~~~)[\w+-]*\s*$", re.MULTILINE)
_WIKILINK = re.compile(r"\[\[(?:[^\[\]|\n]*:)?([^\[\]|\n]+?)(?:\|([^\[\]\n]*))?\]\]")
_MDLINK = re.compile(r"\[([^\[\]\n]*)\]\([^()\s]*\)")
_EMPHASIS = re.compile(r"(\*\*|__|`+)")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)
_QUERY_WORD = re.compile(r"\w{2,}")


def plain(text: str) -> str:
    """``text`` without markdown syntax: fences, link brackets, emphasis, heading marks."""
    text = _FENCE.sub("", text)
    text = _WIKILINK.sub(lambda m: (m.group(2) or m.group(1)).strip(), text)
    text = _MDLINK.sub(lambda m: m.group(1), text)
    text = _HEADING.sub("", text)
    return _EMPHASIS.sub("", text)


def stems_of(query: str, words: Iterable[str] = ()) -> tuple[str, ...]:
    found = {w.lower()[:STEM] for w in [*_QUERY_WORD.findall(query), *words] if len(w) >= 2}
    return tuple(sorted(found, key=len, reverse=True))


@lru_cache(maxsize=256)
def _marker(stems: tuple[str, ...]) -> re.Pattern[str]:
    """One pattern per query: a whole word that starts like one of ``stems``."""
    return re.compile(rf"\b(?:{'|'.join(map(re.escape, stems))})\w*", re.IGNORECASE)


def highlight(text: str, stems: tuple[str, ...]) -> Markup:
    """Escaped ``text`` with each word that starts like a query word inside ``<mark>``.

    The regular expression finds the marked words only, so the text between them is
    escaped in whole pieces instead of word by word."""
    if not stems:
        return escape(text)
    out: list[str] = []
    at = 0
    for match in _marker(stems).finditer(text):
        out.append(str(escape(text[at : match.start()])))
        out.append(f"<mark>{escape(match.group())}</mark>")
        at = match.end()
    out.append(str(escape(text[at:])))
    return Markup("".join(out))  # every piece above was escaped


def snippet_html(text: str, stems: tuple[str, ...]) -> Markup:
    return highlight(plain(text), stems)
