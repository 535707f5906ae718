"""The turns a session hit shows: its best matching turns, each followed by its reply.

A turn that matches the query's words is often the question, and the turn
after it (the other speaker's answer, the tool call and its output) holds
what was asked for; so each matching turn brings the next turn of its
session along, marked with ``follows``. Session start and end events are
never shown as replies. Which of a session's matching turns are shown is
chosen for the query (``turn_choice``), not taken in BM25 order. Turns are raw
observations: a user is shown only those of sessions they own (the page hit stays).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from ai_memory.core.principal import Principal
from ai_memory.retrieval.fusion import Fused
from ai_memory.retrieval.inlist import marks, padded
from ai_memory.retrieval.models import Turn
from ai_memory.retrieval.snippets import cut_snippet, stems_of
from ai_memory.retrieval.turn_choice import chosen_turns
from ai_memory.store.acting import acting

TURN_WORDS = 40  # words of a turn's snippet

BODIES = "SELECT id, body FROM observations WHERE id IN ({marks})"
OWNED = "SELECT id FROM observations WHERE id IN ({marks}) AND owner IS ?"

# The next turn of the same session (observations_session leads with these columns).
REPLIES = """
SELECT t.id AS after, n.id, n.session_id, n.kind, n.created_at, n.body
FROM observations t JOIN observations n ON n.id = (
    SELECT o.id FROM observations o
    WHERE o.workspace = t.workspace AND o.project = t.project AND o.session_id = t.session_id
        AND o.id > t.id AND o.kind NOT IN ('session-start', 'session-end')
    ORDER BY o.id LIMIT 1
)
WHERE t.id IN ({marks})
"""


def session_turns(
    conn: sqlite3.Connection, entries: list[Fused], terms: list[str]
) -> dict[int, list[Turn]]:
    """page id -> the turns to show for each session hit among ``entries``."""
    carriers = [
        (entry.page_id, c.detail)
        for entry in entries
        for c in entry.streams.values()
        if c.detail.get("turns")
    ]
    candidates = {
        page_id: detail.get("candidates") or detail["turns"] for page_id, detail in carriers
    }
    matched = chosen_turns(conn, candidates, terms)
    who = acting()
    if not who.sees_every_owner():
        matched = _withhold(conn, who, matched, [detail for _, detail in carriers])
    for page_id, detail in carriers:
        detail["turns"] = matched[page_id]  # explain lists the turns the hit shows
        if not detail["turns"] and not who.sees_every_owner():
            del detail["turns"]  # withheld: explain says nothing of them either
    ids = [obs.id for found in matched.values() for obs in found]
    if not ids:
        return {}
    ids = padded(ids)
    listed = marks(len(ids))
    bodies = {int(r["id"]): r["body"] for r in conn.execute(BODIES.format(marks=listed), ids)}
    replies = {int(r["after"]): r for r in conn.execute(REPLIES.format(marks=listed), ids)}
    stems = stems_of(terms)
    out: dict[int, list[Turn]] = {}
    for page_id, found in matched.items():
        shown: dict[int, Turn] = {}
        for obs in found:
            if obs.id not in shown:  # else shown as an earlier turn's reply: cut no snippet
                body = bodies.get(obs.id, "")
                shown[obs.id] = _turn(obs.id, obs.session_id, obs.kind, obs.created_at, body, stems)
            reply = replies.get(obs.id)
            if reply is not None and int(reply["id"]) not in shown:
                turn = _turn(
                    int(reply["id"]),
                    reply["session_id"],
                    reply["kind"],
                    reply["created_at"],
                    reply["body"],
                    stems,
                )
                turn.follows = obs.id
                shown[turn.observation_id] = turn
        out[page_id] = list(shown.values())
    return out


def _turn(
    observation_id: int, session_id: str, kind: str, created_at: Any, body: str, stems: list[str]
) -> Turn:
    return Turn(
        observation_id=observation_id,
        session_id=session_id,
        kind=kind,
        created_at=str(created_at),
        snippet=cut_snippet(body, stems, {}, window=TURN_WORDS),
    )


def _withhold(
    conn: sqlite3.Connection,
    who: Principal,
    matched: dict[int, list[Any]],
    details: list[dict[str, Any]],
) -> dict[int, list[Any]]:
    """The turns ``who`` may read; a vote's best observation they may not read is dropped
    from its detail too, so ``explain`` names none of another user's observations."""
    ids = [obs.id for found in matched.values() for obs in found]
    ids += [int(d["observation_id"]) for d in details if "observation_id" in d]
    mine = readable_observations(conn, ids, who)
    for detail in details:
        if detail.get("observation_id") not in mine:
            detail.pop("observation_id", None)
    return {page: [o for o in found if o.id in mine] for page, found in matched.items()}


def readable_observations(conn: sqlite3.Connection, ids: list[int], who: Principal) -> set[int]:
    """Those of ``ids`` that ``who`` may read: observations their key captured (every one
    for the operator and admins)."""
    if who.sees_every_owner() or not ids:
        return set(ids)
    marks = ",".join("?" * len(ids))
    return {int(r["id"]) for r in conn.execute(OWNED.format(marks=marks), (*ids, who.owner))}
