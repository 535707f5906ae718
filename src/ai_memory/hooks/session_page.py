"""What a session left behind, read from its observations and rendered as a page (no LLM)."""

from __future__ import annotations

import json
import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from ai_memory.core.identity import Scope

PROMPTS_TOTAL_CAP = 200 * 1024
TITLE_CHARS = 120
_SPACES = re.compile(r"\s+")
_BACKTICKS = re.compile(r"`+")
# Link syntax in captured text ("[[page]]", "[label](page.md)") must not become a real link.
_LINK_OPENERS = re.compile(r"\[(?=\[)|\](?=\()")
_ZWSP = "\u200b"

SESSION_ROW = """
SELECT session_id, agent, cwd, started_at, last_event_at, ended_at, end_reason, page_id
FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?
"""
SESSION_PROMPTS = """
SELECT body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'user-prompt' ORDER BY id
"""
SESSION_TOOLS = """
SELECT tool_name, count(*) AS n FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'post-tool-use'
GROUP BY tool_name ORDER BY n DESC, tool_name
"""
SESSION_PRE_TOOLS = """
SELECT tool_name, count(*) AS n FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'pre-tool-use'
GROUP BY tool_name ORDER BY n DESC, tool_name
"""
SESSION_FILES = """
SELECT meta FROM observations
WHERE workspace = ? AND project = ? AND session_id = ?
    AND kind IN ('pre-tool-use', 'post-tool-use') AND meta LIKE '%"files"%'
ORDER BY id
"""
SESSION_LAST_ASSISTANT = """
SELECT body FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? AND kind = 'stop' AND body != ''
ORDER BY id DESC LIMIT 1
"""
SESSION_RECENT = """
SELECT id, kind, tool_name, body, created_at FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? ORDER BY id DESC LIMIT ?
"""
SESSION_STATS = """
SELECT count(*), coalesce(max(id), 0) FROM observations
WHERE workspace = ? AND project = ? AND session_id = ?
"""


@dataclass
class SessionDigest:
    """Everything the page and the handoff say about one session."""

    session_id: str
    agent: str
    cwd: str | None
    started_at: str
    ended_at: str | None
    end_reason: str | None
    observation_count: int
    last_observation_id: int
    prompts: list[str] = field(default_factory=list)
    prompts_cut: int = 0
    tools: list[tuple[str, int]] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    last_assistant: str | None = None
    recent: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_work(self) -> bool:
        return bool(self.prompts or self.tools or self.last_assistant)

    @property
    def title(self) -> str:
        for prompt in self.prompts:
            line = _SPACES.sub(" ", prompt).strip()
            if line and not line.startswith("/"):
                return line[:TITLE_CHARS].rstrip() + ("…" if len(line) > TITLE_CHARS else "")
        return f"Session {self.session_id}"

    @property
    def summary(self) -> str:
        tool_calls = sum(n for _, n in self.tools)
        parts = [
            f"{self.agent} session: {len(self.prompts)} prompt(s), {tool_calls} tool call(s), "
            f"{len(self.files)} file(s) touched"
        ]
        if self.files:
            parts.append("files: " + ", ".join(self.files[:5]))
        return "; ".join(parts)[:500]


def read_digest(
    conn: sqlite3.Connection, scope: Scope, session_id: str, recent_limit: int
) -> SessionDigest | None:
    key = (scope.workspace, scope.project, session_id)
    row = conn.execute(SESSION_ROW, key).fetchone()
    if row is None:
        return None
    count, last_id = conn.execute(SESSION_STATS, key).fetchone()
    digest = SessionDigest(
        session_id=session_id,
        agent=row["agent"],
        cwd=row["cwd"],
        started_at=row["started_at"],
        ended_at=row["ended_at"],
        end_reason=row["end_reason"],
        observation_count=int(count),
        last_observation_id=int(last_id),
    )
    total = 0
    for (body,) in conn.execute(SESSION_PROMPTS, key):
        if not body.strip():
            continue
        if total + len(body) > PROMPTS_TOTAL_CAP:
            digest.prompts_cut += 1
            continue
        total += len(body)
        digest.prompts.append(body)
    tools = (
        conn.execute(SESSION_TOOLS, key).fetchall()
        or conn.execute(SESSION_PRE_TOOLS, key).fetchall()
    )
    digest.tools = [(r["tool_name"] or "tool", int(r["n"])) for r in tools]
    digest.files = _files(conn.execute(SESSION_FILES, key))
    last = conn.execute(SESSION_LAST_ASSISTANT, key).fetchone()
    digest.last_assistant = last["body"] if last else None
    if recent_limit:
        rows = conn.execute(SESSION_RECENT, (*key, recent_limit)).fetchall()
        digest.recent = [dict(r) for r in reversed(rows)]
    return digest


def _files(rows: Any) -> list[str]:
    seen: dict[str, None] = {}
    for (meta,) in rows:
        try:
            files = json.loads(meta).get("files") or []
        except (ValueError, AttributeError):
            continue
        for name in files:
            if isinstance(name, str) and len(seen) < 500:
                seen.setdefault(name, None)
    return list(seen)


def render_page(digest: SessionDigest, ended_at: str) -> tuple[str, dict[str, Any]]:
    """The page body (markdown) and its frontmatter fields."""
    lines = [
        f"# {_one_line(digest.title)}",
        "",
        f"- Agent: {digest.agent}",
        f"- Session: `{digest.session_id}`",
        f"- Started: {digest.started_at}",
        f"- Ended: {ended_at} ({digest.end_reason or 'session-end'})",
    ]
    if digest.cwd:
        lines.append(f"- Directory: `{_one_line(digest.cwd)}`")
    lines += ["", "## Prompts", ""]
    if digest.prompts:
        for number, prompt in enumerate(digest.prompts, 1):
            lines += [f"### Prompt {number}", "", _escape_block(prompt), ""]
        if digest.prompts_cut:
            lines += [f"({digest.prompts_cut} more prompt(s) not shown: size limit)", ""]
    else:
        lines += ["(none captured)", ""]
    lines += ["## Tool calls", ""]
    lines += [f"- {name}: {n}" for name, n in digest.tools] or ["(none)"]
    lines += ["", "## Files touched", ""]
    lines += [f"- `{_one_line(name)}`" for name in digest.files] or ["(none)"]
    if digest.last_assistant:
        lines += ["", "## Last assistant message", "", _escape_block(digest.last_assistant)]
    lines += ["", f"## Observations (last {len(digest.recent)} of {digest.observation_count})", ""]
    for obs in digest.recent:
        excerpt = _one_line(obs["body"][:400])[:200]
        tool = f" {obs['tool_name']}" if obs["tool_name"] else ""
        lines.append(f"- {obs['created_at']} {obs['kind']}{tool}: {excerpt}")
    meta: dict[str, Any] = {
        "title": digest.title,
        "kind": "session",
        "tier": "episodic",
        "session_id": digest.session_id,
        "agent": digest.agent,
        "summary": digest.summary,
    }
    if digest.files:  # a path past the frontmatter cap is listed in the body only
        meta["source_files"] = [name for name in digest.files if len(name) <= 500][:50]
    return "\n".join(lines) + "\n", meta


def _one_line(text: str) -> str:
    """Captured text on one line, its link syntax broken so it links nowhere."""
    return _no_links(_SPACES.sub(" ", text).strip())


def _no_links(text: str) -> str:
    return _LINK_OPENERS.sub(lambda m: m.group(0) + _ZWSP, text)


def _escape_block(text: str) -> str:
    """Captured text stays plain content: a code block no backtick run inside can close,
    so it opens no heading, frontmatter or code block of its own, and links nowhere."""
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}text\n{_no_links(text)}\n{fence}"
