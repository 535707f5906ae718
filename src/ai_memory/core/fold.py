"""A matching view of text in which look-alike spellings read as their plain form.

An agent reads a tag in fullwidth brackets, with Unicode dashes, as HTML entities
(``&lt;/untrusted-history&gt;``) or broken up by zero-width characters much as it
reads the plain tag, so the fence matches tags in this folded view and edits the
original text at the positions the view maps back to. Folding is for matching
only: nothing folded is shown.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from dataclasses import dataclass
from html.entities import html5

# Unicode dashes, hyphens and minus signs an agent reads as '-'.
DASHES = frozenset("\u2010\u2011\u2012\u2013\u2014\u2015\u2043\u2212\u2e3a\u2e3b\ufe58\ufe63\uff0d")
# Angle brackets NFKC leaves alone but that render as '<' or '>'.
BRACKETS = {
    **dict.fromkeys("\u02c2\u1438\u2329\u27e8\u276e\u3008", "<"),
    **dict.fromkeys("\u02c3\u1433\u232a\u27e9\u276f\u3009", ">"),
}
# Characters that vanish on screen: format (zero-width, soft hyphen, bidi) and combining marks.
INVISIBLE = frozenset({"Cf", "Mn", "Me"})

# One token: a run of text without ``&`` or ``\``, an HTML character reference
# (``&amp;`` chains included), a backslash escape (``\u003c``, ``\x3c``), or a lone
# ``&`` or ``\``.
_TOKEN = re.compile(
    r"(?P<plain>[^&\\]+)"
    r"|&(?:amp;)*(?P<entity>#[0-9]{1,7}|#x[0-9a-f]{1,6}|[a-z][a-z0-9]{1,31});?"
    r"|\\+(?P<escape>u[0-9a-f]{4}|x[0-9a-f]{2})"
    r"|.",
    re.IGNORECASE | re.DOTALL,
)


@dataclass(frozen=True, slots=True)
class Folded:
    """The folded text, and where each stretch of it came from in the original.

    A stretch either maps character for character (``exact``) or stands for one
    original token as a whole (an entity, a character NFKC expands).
    """

    text: str
    folded_starts: list[int]
    original_starts: list[int]
    original_ends: list[int]
    exact: list[bool]

    def source(self, index: int) -> tuple[int, int]:
        """The original span the folded character at ``index`` came from."""
        stretch = bisect_right(self.folded_starts, index) - 1
        start = self.original_starts[stretch]
        if self.exact[stretch]:
            at = start + index - self.folded_starts[stretch]
            return at, at + 1
        return start, self.original_ends[stretch]


class _Builder:
    """Collects folded stretches; one per token, so plain text costs one append."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.size = 0
        self.folded_starts: list[int] = []
        self.original_starts: list[int] = []
        self.original_ends: list[int] = []
        self.exact: list[bool] = []

    def add(self, piece: str, start: int, end: int, exact: bool) -> None:
        if not piece:
            return
        self.parts.append(piece)
        self.folded_starts.append(self.size)
        self.original_starts.append(start)
        self.original_ends.append(end)
        self.exact.append(exact)
        self.size += len(piece)

    def build(self) -> Folded:
        return Folded(
            "".join(self.parts),
            self.folded_starts,
            self.original_starts,
            self.original_ends,
            self.exact,
        )


def fold(text: str) -> Folded:
    """Fold ``text`` in one left-to-right pass (linear in its length)."""
    builder = _Builder()
    cache: dict[str, str] = {}
    for token in _TOKEN.finditer(text):
        start, end = token.span()
        plain = token.group("plain")
        if plain is not None and plain.isascii():
            builder.add(plain, start, end, True)
        elif plain is not None:
            _add_plain(builder, plain, start, cache)
        else:
            decoded, used = _decode(token)
            builder.add("".join(_fold_char(char) for char in decoded), start, start + used, False)
            builder.add(token.group()[used:], start + used, end, True)
    return builder.build()


def _add_plain(builder: _Builder, run: str, start: int, cache: dict[str, str]) -> None:
    """A run holding non-ASCII: one exact stretch when every character folds to one
    character (most text), else a stretch per character."""
    pieces = [cache[c] if c in cache else cache.setdefault(c, _fold_char(c)) for c in run]
    joined = "".join(pieces)
    if len(joined) == len(run) and all(pieces):
        builder.add(joined, start, start + len(run), True)
        return
    for offset, piece in enumerate(pieces):
        builder.add(piece, start + offset, start + offset + 1, len(piece) == 1)


def _decode(token: re.Match[str]) -> tuple[str, int]:
    """What a character reference or escape stands for, and how many of the token's
    characters it used (a name without ``;`` may be a prefix: ``&ltfoo``)."""
    whole = token.group()
    entity, escape = token.group("entity"), token.group("escape")
    if escape is not None:
        return _char(int(escape[1:], 16)) or whole, len(whole)
    if entity is None:
        return whole, len(whole)
    if entity.startswith(("#x", "#X")):
        return _char(int(entity[2:], 16)) or whole, len(whole)
    if entity.startswith("#"):
        return _char(int(entity[1:])) or whole, len(whole)
    named = html5.get(entity + ";") or html5.get(entity.lower() + ";")
    if named:
        return named, len(whole)
    before = len(whole) - len(entity) - whole.endswith(";")  # '&' and any 'amp;'
    for size in range(len(entity) - 1, 1, -1):  # the legacy names that need no ';'
        legacy = html5.get(entity[:size]) or html5.get(entity[:size].lower())
        if legacy:
            return legacy, before + size
    return whole, len(whole)


def _char(codepoint: int) -> str:
    return chr(codepoint) if 0 < codepoint < 0x110000 else ""


def _fold_char(char: str) -> str:
    if char.isascii():
        return char
    if char in DASHES:
        return "-"
    if char in BRACKETS:
        return BRACKETS[char]
    if unicodedata.category(char) in INVISIBLE:
        return ""
    return unicodedata.normalize("NFKC", char)
