"""The session-start packet: a handoff, a recovery snapshot and the project brief.

Everything in it came from captures or pages, so it is delivered inside an
untrusted-history fence with a note that it is context, not instructions.
The whole text fits a character budget (never above 9,500, so it fits a
10,000-character hook context): whole pages first, then excerpts.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.fence import FENCE, NOTE, neutralise
from ai_memory.core.identity import GLOBAL_PROJECT, Scope
from ai_memory.core.kinds import RULE_PAGE_SQL
from ai_memory.hooks.session_page import checkout_root, relative_path

MAX_BUDGET = 9500
HANDOFF_CHARS = 2500
RECOVERY_CHARS = 1500
ANCHOR_CHARS = 2500
MIN_EXCERPT = 200

BRIEF_PAGES = f"""
SELECT id, project, path, title, body, pinned FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
    AND (pinned = 1 OR {RULE_PAGE_SQL} OR path LIKE '\\_slots/%' ESCAPE '\\')
ORDER BY CASE WHEN {RULE_PAGE_SQL} THEN 0
    WHEN path LIKE '\\_slots/%' ESCAPE '\\' THEN 1 ELSE 2 END, created_at DESC
LIMIT 60
"""
# The caller's own newest other session: another user's prompts are theirs alone.
NEWEST_OTHER = """
SELECT session_id, agent, ended_at, last_event_at FROM sessions
WHERE workspace = ? AND project = ? AND (? IS NULL OR session_id != ?) AND owner IS ?
ORDER BY last_event_at DESC, id DESC LIMIT 1
"""
# In the order the events happened (an event retried from a spool is stored after ones
# that came later), stored order breaking ties.
LAST_PROMPTS = """
SELECT body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'user-prompt'
ORDER BY created_at DESC, id DESC LIMIT 5
"""
FIRST_PROMPT = """
SELECT body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'user-prompt'
ORDER BY created_at, id LIMIT 1
"""
LAST_ASSISTANT = """
SELECT body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'stop' AND body != ''
ORDER BY created_at DESC, id DESC LIMIT 1
"""
EDITED = """
SELECT meta FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'post-tool-use'
    AND meta LIKE '%"action": "edit"%' ORDER BY created_at DESC, id DESC LIMIT 40
"""
SESSION_CWD = "SELECT cwd FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?"
# Short extracts of every brief page first, then deeper ones, then whole bodies.
TIERS = (160, 700)


@dataclass
class BriefSource:
    """What the packet is packed from, read in one go."""

    pages: list[dict[str, Any]] = field(default_factory=list)
    recovery: dict[str, Any] | None = None


def read_source(
    conn: sqlite3.Connection,
    scope: Scope,
    session_id: str | None,
    stale_before: str,
    *,
    pages: bool = True,
    owner: int | None = None,
    hidden: frozenset[Scope] = frozenset(),
) -> BriefSource:
    """Brief pages, and ``owner``'s newest other session when it has not ended: shown at
    once, as "interrupted" once silent since ``stale_before``, as "still open" before that.
    The shared _global project's pages count unless it is ``hidden`` from the caller."""
    source = BriefSource()
    projects = [scope.project]
    shared = Scope(scope.workspace, GLOBAL_PROJECT)
    if scope.project != GLOBAL_PROJECT and shared not in hidden:
        projects.append(GLOBAL_PROJECT)
    for project in projects if pages else ():
        rows = conn.execute(BRIEF_PAGES, (scope.workspace, project)).fetchall()
        source.pages += [dict(r) for r in rows]
    row = conn.execute(
        NEWEST_OTHER, (scope.workspace, scope.project, session_id, session_id, owner)
    ).fetchone()
    if row is not None and row["ended_at"] is None:
        snapshot = read_snapshot(conn, scope, row["session_id"])
        if snapshot is not None:
            source.recovery = {
                "session_id": row["session_id"],
                "agent": row["agent"],
                "last_event_at": row["last_event_at"],
                "state": "interrupted" if row["last_event_at"] < stale_before else "open",
                **snapshot,
            }
    return source


def read_snapshot(conn: sqlite3.Connection, scope: Scope, session_id: str) -> dict[str, Any] | None:
    """Where a session stands: its goal, latest prompts, files it changed, last answer."""
    key = (scope.workspace, scope.project, session_id)
    prompts = conn.execute(LAST_PROMPTS, key).fetchall()
    if not prompts:
        return None
    first = conn.execute(FIRST_PROMPT, key).fetchone()
    cwd = conn.execute(SESSION_CWD, key).fetchone()
    root = checkout_root(cwd[0] if cwd else None)
    last = conn.execute(LAST_ASSISTANT, key).fetchone()
    edited: dict[str, None] = {}
    for (meta,) in conn.execute(EDITED, key):
        try:
            files = json.loads(meta).get("files") or []
        except (ValueError, AttributeError):
            continue
        for name in files:
            relative = relative_path(name, root) if isinstance(name, str) else None
            if relative is not None:
                edited.setdefault(relative, None)
    return {
        "first_prompt": first["body"][:600] if first else None,
        "last_prompts": [p["body"][:400] for p in reversed(prompts)],
        "files_edited": list(edited)[:15],
        "last_assistant_message": last["body"][:600] if last else None,
    }


def build_packet(
    scope: Scope,
    handoff: dict[str, Any] | None,
    source: BriefSource,
    budget: int,
    anchor: str | None = None,
) -> dict[str, Any]:
    """Pack anchor, handoff, recovery and brief pages into ``budget`` characters of fenced
    text. The anchor (where the asking session itself stands) goes first."""
    budget = max(500, min(budget, MAX_BUDGET))
    head = f'{NOTE}\n<{FENCE} project="{neutralise(str(scope))}">\n'
    tail = f"\n</{FENCE}>"
    sections: list[str] = []
    if anchor:
        sections.append(_fit(anchor, ANCHOR_CHARS))
    if handoff is not None:
        sections.append(_fit(_handoff_text(handoff), HANDOFF_CHARS))
    if source.recovery is not None and (
        handoff is None or handoff.get("from_session") != source.recovery["session_id"]
    ):
        sections.append(_fit(_recovery_text(source.recovery), RECOVERY_CHARS))
    room = budget - len(head) - len(tail) - sum(len(s) + 1 for s in sections) - 200
    included, excerpts, omitted, page_text = _pack_pages(source.pages, room)
    if page_text:
        sections.append("## Project brief\n" + page_text)
    if omitted:
        sections.append(_fit("Not included (over budget): " + ", ".join(omitted), 190))
    empty = not sections
    context = "" if empty else head + neutralise("\n".join(sections)) + tail
    if len(context) > budget:
        context = context[: budget - len(tail) - 2] + "…" + tail
    return {
        "workspace": scope.workspace,
        "project": scope.project,
        "handoff": handoff,
        "recovery": source.recovery,
        "anchor": anchor,
        "brief": {"included": included, "excerpts": excerpts, "omitted": omitted},
        "budget": budget,
        "context": context,
        "empty": empty,
    }


def shown_page_ids(source: BriefSource, packet: dict[str, Any]) -> list[int]:
    """The ids of the brief pages the packet shows, whole or as an excerpt: they count as
    read (reinforced), the ones left out over budget do not."""
    brief = packet["brief"]
    shown = {*brief["included"], *brief["excerpts"]}
    return [int(page["id"]) for page in source.pages if _name(page) in shown]


def _pack_pages(
    pages: list[dict[str, Any]], room: int
) -> tuple[list[str], list[str], list[str], str]:
    """Fit as many pages as the room allows, in tiers: a short extract of each first (in
    brief order: rules, slots, pinned), then deeper extracts, then whole bodies."""
    sizes: list[int | None] = [None] * len(pages)  # None: not in; else body chars kept
    texts = [""] * len(pages)
    for level, tier in enumerate((*TIERS, None)):
        upgrades: list[tuple[int, int, int, str]] = []
        for index, page in enumerate(pages):
            if level and sizes[index] is None:
                continue  # a page with no extract in gets no deeper one either
            body = page["body"].strip()
            size = len(body) if tier is None else min(tier, len(body))
            if sizes[index] is not None and size <= (sizes[index] or 0):
                continue
            text = _page_text(page, body if size >= len(body) else _extract(body, size))
            upgrades.append((len(text) - len(texts[index]), index, size, text))
        if level:  # past the first extracts, the cheapest deepening first: more pages whole
            upgrades.sort(key=lambda item: item[0])
        for cost, index, size, text in upgrades:
            if cost <= room:
                room -= cost
                texts[index], sizes[index] = text, size
    included: list[str] = []
    excerpts: list[str] = []
    omitted: list[str] = []
    for index, page in enumerate(pages):
        kept = sizes[index]
        if kept is None:
            omitted.append(_name(page))
        elif kept >= len(page["body"].strip()):
            included.append(_name(page))
        else:
            excerpts.append(_name(page))
    return included, excerpts, omitted, "".join(texts)


def _extract(body: str, size: int) -> str:
    """The first ``size`` characters, cut at a word, marked as cut."""
    cut = body[:size]
    space = cut.rfind(" ")
    if space > size // 2:
        cut = cut[:space]
    return cut.rstrip() + "…"


def _name(page: dict[str, Any]) -> str:
    return (
        f"{page['project']}:{page['path']}" if page["project"] == GLOBAL_PROJECT else page["path"]
    )


def _page_text(page: dict[str, Any], body: str) -> str:
    return f"### {page['title']} ({_name(page)})\n{body.strip()}\n"


def _handoff_text(handoff: dict[str, Any]) -> str:
    content = handoff.get("content") or {}
    who = handoff.get("from_agent") or "an agent"
    lines = [f"## Handoff from {who} ({handoff['origin']}, {handoff['created_at']})"]
    lines.append(str(handoff["summary"]))
    if content.get("page"):
        lines.append(f"Session page: {content['page']}")
    for key, label in (
        ("next_steps", "Next steps"),
        ("open_questions", "Open questions"),
        ("decisions", "Decisions"),
        ("failures", "Failed commands"),
        ("shared", "Shared"),
    ):
        value = content.get(key)
        if value:
            lines.append(
                f"{label}: {value if isinstance(value, str) else '; '.join(map(str, value))}"
            )
    prompts = content.get("last_prompts") or []
    if prompts:
        lines.append("Last prompts:")
        lines += [f"- {' '.join(str(p).split())[:300]}" for p in prompts]
    files = content.get("files") or content.get("files_touched") or []
    if files:
        lines.append("Files touched: " + ", ".join(map(str, files[:15])))
    if content.get("last_assistant_message"):
        last = " ".join(str(content["last_assistant_message"]).split())[:800]
        lines.append(f"Last assistant message: {last}")
    return "\n".join(lines) + "\n"


def _recovery_text(recovery: dict[str, Any]) -> str:
    state = (
        "is still open (running elsewhere, or cut off without ending)"
        if recovery.get("state") == "open"
        else "was cut off without ending"
    )
    lines = [
        f"## Continuity: session {recovery['session_id']} ({recovery['agent']}, last event "
        f"{recovery['last_event_at']}) {state}; it left no handoff. Where it stood:"
    ]
    if recovery.get("first_prompt"):
        lines.append(f"Goal (first prompt): {' '.join(recovery['first_prompt'].split())[:300]}")
    lines.append("Its last prompts:")
    lines += [f"- {' '.join(p.split())[:300]}" for p in recovery["last_prompts"]]
    if recovery.get("files_edited"):
        lines.append("Files it changed: " + ", ".join(recovery["files_edited"]))
    if recovery.get("last_assistant_message"):
        last = " ".join(recovery["last_assistant_message"].split())[:400]
        lines.append(f"Its last answer: {last}")
    return "\n".join(lines) + "\n"


def _fit(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
