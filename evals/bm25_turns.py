"""The one-table baseline: SQLite FTS5 BM25 over single turns, one table per run.

Each turn is one row (the same ``"<speaker>: <text>"`` prompt the pipeline gets);
a question becomes the OR of its content words, prepared the way the pipeline
prepares it, and is matched within its own conversation. The top 5 turns give
turn R@5; the first 5 distinct sessions among the ranked turns give session R@5.
``shown`` gives the baseline the pipeline's own turn budget: the 2 best turns of
each of the first 5 sessions, each with the turn after it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

from ai_memory.retrieval.query import prepare
from ai_memory.retrieval.stopwords import ENGLISH

TOKENIZERS = {"porter": "porter unicode61", "unicode61": "unicode61"}
DEPTH = 200


class TurnIndex:
    """Rows (conversation, session number, dia id, text) in an in-memory FTS5 table."""

    def __init__(self, tokenizer: str, rows: Iterable[tuple[str, int, str, str]]) -> None:
        self.conn = sqlite3.connect(":memory:")
        self.conn.execute(
            f"CREATE VIRTUAL TABLE t USING fts5(text, conv UNINDEXED, session UNINDEXED, "
            f"dia UNINDEXED, tokenize='{TOKENIZERS[tokenizer]}')"
        )
        self.conn.executemany("INSERT INTO t(conv, session, dia, text) VALUES (?, ?, ?, ?)", rows)

    def ranked(self, conv: str, question: str) -> list[tuple[int, str]]:
        """(session number, dia id) of the best matching turns of ``conv``, best first."""
        expression = prepare(question, ENGLISH).fallback
        if not expression:
            return []
        rows = self.conn.execute(
            "SELECT session, dia FROM t WHERE t MATCH ? AND conv = ? ORDER BY rank LIMIT ?",
            (expression, conv, DEPTH),
        ).fetchall()
        return [(int(s), str(d)) for s, d in rows]


def recall(
    ranked: list[tuple[int, str]], sessions: set[int], turns: set[str]
) -> tuple[int | None, bool]:
    """(rank of the first evidence session among the distinct sessions of the ranked
    turns, whether an evidence turn is among the top 5 turns)."""
    distinct = list(dict.fromkeys(s for s, _ in ranked))
    rank = next((i for i, s in enumerate(distinct, 1) if s in sessions), None)
    return rank, any(d in turns for _, d in ranked[:5])


def shown(ranked: list[tuple[int, str]], turns: set[str], hits: int = 5, each: int = 2) -> bool:
    """Whether an evidence turn is among the turns the pipeline would show for these
    ranked turns: ``each`` best turns of each of the first ``hits`` sessions, plus
    the turn after each (``D<s>:<i>`` is followed by ``D<s>:<i+1>``)."""
    per: dict[int, list[str]] = {}
    for session, dia in ranked:
        if session in per or len(per) < hits:
            per.setdefault(session, [])
            if len(per[session]) < each:
                per[session].append(dia)
    out: set[str] = set()
    for dias in per.values():
        for dia in dias:
            head, _, number = dia.rpartition(":")
            out |= {dia, f"{head}:{int(number) + 1}"} if number.isdigit() else {dia}
    return bool(out & turns)
