"""The session-start packet: a handoff, a recovery snapshot and the project brief.

Everything in it came from captures or pages, so it is delivered inside an
untrusted-history fence with a note that it is context, not instructions.
The whole text fits a character budget (never above 9,500, so it fits a
10,000-character hook context): whole pages first, then excerpts.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.fence import FENCE, NOTE, neutralise
from ai_memory.core.identity import GLOBAL_PROJECT, Scope
from ai_memory.core.kinds import RULE_PAGE_SQL

MAX_BUDGET = 9500
HANDOFF_CHARS = 2500
RECOVERY_CHARS = 1500
MIN_EXCERPT = 200

BRIEF_PAGES = f"""
SELECT project, path, title, body, pinned FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND deleted_at IS NULL
    AND (pinned = 1 OR {RULE_PAGE_SQL} OR path LIKE '\\_slots/%' ESCAPE '\\')
ORDER BY CASE WHEN {RULE_PAGE_SQL} THEN 0
    WHEN path LIKE '\\_slots/%' ESCAPE '\\' THEN 1 ELSE 2 END, created_at DESC
LIMIT 60
"""
NEWEST_OTHER = """
SELECT session_id, agent, ended_at, last_event_at FROM sessions
WHERE workspace = ? AND project = ? AND (? IS NULL OR session_id != ?)
ORDER BY last_event_at DESC, id DESC LIMIT 1
"""
LAST_PROMPTS = """
SELECT body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'user-prompt'
ORDER BY id DESC LIMIT 5
"""


@dataclass
class BriefSource:
    """What the packet is packed from, read in one go."""

    pages: list[dict[str, Any]] = field(default_factory=list)
    recovery: dict[str, Any] | None = None


def read_source(
    conn: sqlite3.Connection, scope: Scope, session_id: str | None, stale_before: str
) -> BriefSource:
    """Brief pages, and the newest other session if it was cut off: silent since
    ``stale_before`` without an end (a live concurrent session is not "interrupted")."""
    source = BriefSource()
    projects = [scope.project]
    if scope.project != GLOBAL_PROJECT:
        projects.append(GLOBAL_PROJECT)
    for project in projects:
        rows = conn.execute(BRIEF_PAGES, (scope.workspace, project)).fetchall()
        source.pages += [dict(r) for r in rows]
    row = conn.execute(
        NEWEST_OTHER, (scope.workspace, scope.project, session_id, session_id)
    ).fetchone()
    prompts = []
    if row is not None and row["ended_at"] is None and row["last_event_at"] < stale_before:
        prompts = conn.execute(
            LAST_PROMPTS, (scope.workspace, scope.project, row["session_id"])
        ).fetchall()
    if row is not None and prompts:
        source.recovery = {
            "session_id": row["session_id"],
            "agent": row["agent"],
            "last_event_at": row["last_event_at"],
            "last_prompts": [p["body"][:400] for p in reversed(prompts)],
        }
    return source


def build_packet(
    scope: Scope, handoff: dict[str, Any] | None, source: BriefSource, budget: int
) -> dict[str, Any]:
    """Pack handoff, recovery and brief pages into ``budget`` characters of fenced text."""
    budget = max(500, min(budget, MAX_BUDGET))
    head = f'{NOTE}\n<{FENCE} project="{neutralise(str(scope))}">\n'
    tail = f"\n</{FENCE}>"
    sections: list[str] = []
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
        "brief": {"included": included, "excerpts": excerpts, "omitted": omitted},
        "budget": budget,
        "context": context,
        "empty": empty,
    }


def _pack_pages(
    pages: list[dict[str, Any]], room: int
) -> tuple[list[str], list[str], list[str], str]:
    included: list[str] = []
    excerpts: list[str] = []
    parts: list[str] = []
    left = []
    for page in pages:
        text = _page_text(page, page["body"])
        if len(text) <= room:
            parts.append(text)
            room -= len(text)
            included.append(_name(page))
        else:
            left.append(page)
    omitted: list[str] = []
    for page in left:
        header = _page_text(page, "")
        if room - len(header) >= MIN_EXCERPT:
            size = min(room - len(header) - 2, 1200)
            text = _page_text(page, page["body"][:size].rstrip() + "…")
            parts.append(text)
            room -= len(text)
            excerpts.append(_name(page))
        else:
            omitted.append(_name(page))
    return included, excerpts, omitted, "".join(parts)


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
    lines = [
        f"## Interrupted session {recovery['session_id']} ({recovery['agent']}, last event "
        f"{recovery['last_event_at']}) ended without a handoff. Its last prompts:"
    ]
    lines += [f"- {' '.join(p.split())[:300]}" for p in recovery["last_prompts"]]
    return "\n".join(lines) + "\n"


def _fit(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
