"""Which turns of a session hit to show: the ones that carry the query's rarer words.

The turn stream ranks turns by BM25 across every session, which favours short
turns: in a conversation "Jon: Thanks!" matches "Jon" and outscores a longer
turn that names the city Jon visited. A word found in most of the matching
turns being shown (a speaker's name, the project's name, "test" in a project
that is all tests) says little about which turn answers, however rare it is
in the whole index. So among the matching turns of the sessions shown, each
turn is weighed by the query words it holds, each word weighted by how rare
it is among those turns alone (a local IDF); BM25 breaks ties. The ranking
of the hits does not change, only which of their matching turns are shown.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Mapping, Sequence

from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.snippets import starts_a_word
from ai_memory.retrieval.streams.evidence import TURNS, Observation

PREFIX = 5  # a query word is in a turn when a word of it starts with its first 5 letters
HEAD_CHARS = 4000  # how much of a turn is looked at (tool output can run to 16 KiB)
HEADS = "SELECT id, substr(body, 1, ?) AS head FROM observations WHERE id IN ({marks})"


def chosen_turns(
    conn: sqlite3.Connection, candidates: Mapping[int, Sequence[Observation]], terms: list[str]
) -> dict[int, list[Observation]]:
    """page id -> the ``TURNS`` of its matching turns to show, best first."""
    ids = [obs.id for found in candidates.values() for obs in found]
    if not ids or not terms:
        return {page_id: list(found[:TURNS]) for page_id, found in candidates.items()}
    listed = padded(ids)
    sql = HEADS.format(marks=marks(len(listed)))
    heads = {int(r["id"]): r["head"].lower() for r in conn.execute(sql, (HEAD_CHARS, *listed))}
    weight = local_weights(heads, terms)
    return {
        page_id: sorted(found, key=lambda o: (-weight.get(o.id, 0.0), o.score, o.id))[:TURNS]
        for page_id, found in candidates.items()
    }


def local_weights(texts: Mapping[int, str], terms: list[str]) -> dict[int, float]:
    """id -> the summed local IDF of the query words its (lowercased) text holds."""
    weight = dict.fromkeys(texts, 0.0)
    total = len(texts)
    for term in dict.fromkeys(t.lower()[:PREFIX] for t in terms if t.strip()):
        holding = [i for i, text in texts.items() if starts_a_word(text, term)]
        idf = math.log(1 + (total - len(holding) + 0.5) / (len(holding) + 0.5))
        for i in holding:
            weight[i] += idf
    return weight
