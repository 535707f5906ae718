"""Query preparation: from what an agent typed to safe FTS5 expressions.

A bare query becomes an OR of its content words (stopwords dropped, unless
nothing else is left). Explicit FTS5 syntax is kept when the query uses it;
the stream that runs it falls back to the OR of words if it does not parse,
so a caller never sees a syntax error. CJK runs (no spaces between words) go
to the trigram companion index instead.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass, replace

from ai_memory.core.text import fts_text

# A token as the page tokenizer sees it: word characters plus '_', '-', '/', '.'.
_TOKEN = re.compile(r"[^\W_]+(?:[_\-/.]+[^\W_]+)*|_\w*", re.UNICODE)
_CJK_RUN = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u3130-\u318f]+"
)
_SYNTAX = re.compile(r'"|\*|\(|\)|\^|\b(?:AND|OR|NOT|NEAR)\b|\b\w+\s*:\s*\S')
# Fragments a contraction leaves once its apostrophe splits it ("don't" -> "don", "t").
_FRAGMENTS = frozenset({"s", "t", "d", "ll", "re", "ve", "m"})
MAX_TERMS = 32


@dataclass(frozen=True, slots=True)
class PreparedQuery:
    text: str
    words: tuple[str, ...]  # content words, lowercased, deduplicated
    all_words: tuple[str, ...]  # every word in order (for entity phrases)
    fts: str  # the expression tried first ('' when there are no words)
    fallback: str  # the OR of words, used when ``fts`` does not parse
    mode: str  # "words" or "syntax"
    cjk_match: str  # trigram expression over CJK runs ('' when none)
    cjk_like: tuple[str, ...]  # CJK runs too short for trigrams, matched with LIKE
    weak: bool = False  # every word is in most pages: BM25 cannot tell pages apart

    def without(self, dropped: set[str]) -> PreparedQuery:
        """The same query with some words left out of a words-mode match.

        When every word would go, they all stay and the query is marked weak.
        """
        if not dropped or self.mode != "words":
            return self
        kept = tuple(w for w in self.words if w not in dropped)
        if not kept:
            return replace(self, weak=True)
        fts = " OR ".join(f'"{w}"' for w in kept)
        return replace(self, words=kept, fts=fts, fallback=fts)

    @property
    def empty(self) -> bool:
        return not self.fts and not self.cjk_match and not self.cjk_like


def prepare(text: str, stopwords: Collection[str]) -> PreparedQuery:
    cjk_runs = _CJK_RUN.findall(text)
    latin = _CJK_RUN.sub(" ", text)
    all_words = tuple(_words(latin))
    words = _content_words(all_words, stopwords)
    fallback = " OR ".join(f'"{w}"' for w in words)
    explicit = _SYNTAX.search(latin) is not None
    fts = latin.strip() if explicit and words else fallback
    cjk_match, cjk_like = _cjk(cjk_runs)
    return PreparedQuery(
        text=text,
        words=words,
        all_words=all_words,
        fts=fts,
        fallback=fallback,
        mode="syntax" if explicit and words else "words",
        cjk_match=cjk_match,
        cjk_like=cjk_like,
    )


def _words(text: str) -> list[str]:
    cleaned = fts_text(text.replace("'", " ").replace("\u2019", " ")).lower()
    return [w for w in _TOKEN.findall(cleaned) if w not in _FRAGMENTS]


def _content_words(words: tuple[str, ...], stopwords: Collection[str]) -> tuple[str, ...]:
    unique = list(dict.fromkeys(w for w in words if w not in {"and", "or", "not", "near"}))
    if not unique:
        unique = list(dict.fromkeys(words))
    content = [w for w in unique if w not in stopwords]
    return tuple((content or unique)[:MAX_TERMS])


def _cjk(runs: list[str]) -> tuple[str, tuple[str, ...]]:
    """Runs of three or more characters become OR-ed trigrams; shorter ones use LIKE."""
    grams: dict[str, None] = {}
    short: dict[str, None] = {}
    for run in runs:
        if len(run) < 3:
            short.setdefault(run, None)
            continue
        for i in range(len(run) - 2):
            grams.setdefault(run[i : i + 3], None)
    match = " OR ".join(f'"{g}"' for g in list(grams)[:MAX_TERMS])
    return match, tuple(short)


def normalise_title(text: str) -> str:
    """The comparable form of a title or a query: lowercased words, single spaces."""
    if text.isascii() and text.replace(" ", "").isalnum():
        # Only letters, digits and spaces (most titles): the words are what the
        # tokenizer would find, for a fraction of the cost (the page stream asks per hit).
        words = text.lower().split()  # no whitespace but spaces: split(" ") without ''
        if _FRAGMENTS.isdisjoint(words):
            return " ".join(words)
        return " ".join(w for w in words if w not in _FRAGMENTS)
    return " ".join(_words(text))
