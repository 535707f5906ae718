"""What an agent should know about a project at a glance, as structured data."""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING, Any

from ai_memory.core.identity import Scope
from ai_memory.core.kinds import RULE_PAGE_SQL
from ai_memory.core.principal import Principal
from ai_memory.hooks.handoffs import OPERATOR, VISIBLE, Viewer
from ai_memory.hooks.observations import OWNED, owner_args
from ai_memory.store.counts import project_counts

if TYPE_CHECKING:
    from ai_memory.runtime import Runtime

BODY_CAP = 1_500

# The same notion of a rule as the session-start brief: kind rule or filed under _rules/.
RULES = f"""
SELECT path, title, id AS page_id, body FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND {RULE_PAGE_SQL}
ORDER BY path LIMIT ?
"""
SLOTS = """
SELECT path, title, id AS page_id, body FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND path LIKE '\\_slots/%' ESCAPE '\\'
ORDER BY path LIMIT ?
"""
PINNED = """
SELECT path, title, id AS page_id, kind FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1 AND pinned = 1
ORDER BY created_at DESC LIMIT ?
"""
RECENT = """
SELECT path, title, id AS page_id, kind, created_at FROM pages
WHERE workspace = ? AND project = ? AND is_latest = 1
ORDER BY created_at DESC, id DESC LIMIT ?
"""
# The caller's own sessions (admins and the operator: all), as their counts and the
# sessions list: another user's session id is not handed out.
SESSIONS = f"""
SELECT session_id, agent, started_at, last_event_at, ended_at, end_reason, page_id
FROM sessions WHERE workspace = ? AND project = ? AND {OWNED}
ORDER BY last_event_at DESC LIMIT ?
"""
# Only those the caller may claim: their own and shared ones.
OPEN_HANDOFFS = f"""
SELECT id, origin, from_session, from_agent, summary, content, created_at FROM handoffs
WHERE workspace = ? AND project = ? AND status = 'open' AND {VISIBLE}
ORDER BY created_at DESC LIMIT ?
"""


# The lists whose pages a briefing shows, and so counts as read.
SHOWN = ("rules", "slots", "pinned", "recent_pages")


async def read_briefing(
    runtime: Runtime,
    scope: Scope,
    limit: int,
    viewer: Viewer = OPERATOR,
    who: Principal | None = None,
) -> dict[str, Any]:
    """The briefing of ``scope``, its shown pages counted as read (memory_briefing and
    memory_explore both hand it on); only the handoffs ``viewer`` may claim, and counts of
    what ``who``'s lists show."""
    from ai_memory.mcp.reinforce import reinforce

    data = await runtime.readers.aread(lambda conn: briefing(conn, scope, limit, viewer, who))
    reinforce(runtime, [item["page_id"] for key in SHOWN for item in data[key]])
    return data


def briefing(
    conn: sqlite3.Connection,
    scope: Scope,
    limit: int,
    viewer: Viewer = OPERATOR,
    who: Principal | None = None,
) -> dict[str, Any]:
    params = (scope.workspace, scope.project)
    handoffs = (*params, *viewer.args(), limit)
    mine = owner_args(who)
    return {
        "counts": project_counts(conn, scope, who),
        "rules": [_capped(r) for r in conn.execute(RULES, (*params, limit))],
        "slots": [_capped(r) for r in conn.execute(SLOTS, (*params, limit))],
        "pinned": [dict(r) for r in conn.execute(PINNED, (*params, limit))],
        "recent_pages": [dict(r) for r in conn.execute(RECENT, (*params, limit))],
        "recent_sessions": [dict(r) for r in conn.execute(SESSIONS, (*params, *mine, limit))],
        "open_handoffs": [_handoff(r) for r in conn.execute(OPEN_HANDOFFS, handoffs)],
    }


def _capped(row: sqlite3.Row) -> dict[str, Any]:
    """A page's text for an agent, capped (answer() neutralises it on the way out)."""
    data = dict(row)
    body: str = data.pop("body")
    data["body"] = body[:BODY_CAP]
    data["truncated"] = len(body) > BODY_CAP
    return data


def _handoff(row: sqlite3.Row) -> dict[str, Any]:
    data = dict(row)
    try:
        data["content"] = json.loads(data["content"])
    except (TypeError, ValueError):
        data["content"] = {}
    return data
