"""Text normalisation shared by the indexer and the query side."""

from __future__ import annotations

import re

# Token characters ('_', '-', '/', '.') keep identifiers and paths whole, but at a
# token's edge they are punctuation: "works." must index as "works". This is
# ``(?<!\w)[-./]+|[-./]+(?!\w)`` with the first character taken out in front, so
# the engine can jump from one '-', '.' or '/' to the next (several times faster).
_EDGE_PUNCT = re.compile(r"[-./](?:(?<!\w[-./])[-./]*|[-./]*(?!\w))")


def fts_text(text: str) -> str:
    """The form of ``text`` that goes into (and is searched in) a full-text index."""
    return _EDGE_PUNCT.sub(" ", text)


# Han, Hiragana, Katakana, Hangul and CJK punctuation/compatibility blocks: scripts
# written without spaces, which a word tokenizer cannot split.
_CJK = re.compile(
    "[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u3130-\u318f]"
)


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def normalise_entity(name: str) -> str:
    return " ".join(name.casefold().split())
