"""Text normalisation shared by the indexer and the query side."""

from __future__ import annotations

import re

# Token characters ('_', '-', '/', '.') keep identifiers and paths whole, but at a
# token's edge they are punctuation: "works." must index as "works".
_EDGE_PUNCT = re.compile(r"(?<![\w])[-./]+|[-./]+(?![\w])")


def fts_text(text: str) -> str:
    """The form of ``text`` that goes into (and is searched in) a full-text index."""
    return _EDGE_PUNCT.sub(" ", text)


def normalise_entity(name: str) -> str:
    return " ".join(name.casefold().split())
