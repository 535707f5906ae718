"""What a session left behind, read from its observations (no LLM), for its page and handoff.

One pass over the session's observations, in order: the prompts, every turn's
final assistant message, the files changed apart from the files read (relative to
the checkout), the commands run and how they came out, commits, errors. The
extractive facts (decisions, open questions, next steps) come from
:mod:`ai_memory.hooks.session_facts`; the page is rendered by
:mod:`ai_memory.hooks.session_render`.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from ai_memory.core.identity import Scope
from ai_memory.hookclient.resolve import resolve_project
from ai_memory.hooks import session_facts as facts

PROMPTS_TOTAL_CAP = 200 * 1024
TITLE_CHARS = 120
MAX_ROWS = 5000
MAX_TURNS = 20  # assistant messages kept: the first few and the last ones
TURN_CHARS = 1500
MAX_LISTED = 60
_SPACES = re.compile(r"\s+")
_WRITE_TOOLS = ("write", "write_file", "create_file")
_WRITE_TOOLS = ("write", "write_file", "create_file")

SESSION_ROW = """
SELECT session_id, agent, cwd, started_at, last_event_at, ended_at, end_reason, page_id
FROM sessions WHERE workspace = ? AND project = ? AND session_id = ?
"""
SESSION_EVENTS = """
SELECT id, kind, tool_name, body, meta, created_at FROM observations
WHERE workspace = ? AND project = ? AND session_id = ? ORDER BY id LIMIT ?
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
    root: str | None = None
    prompts: list[str] = field(default_factory=list)
    prompts_cut: int = 0
    answers: list[str] = field(default_factory=list)  # each turn's final message
    answers_cut: int = 0
    tools: list[tuple[str, int]] = field(default_factory=list)
    edited: dict[str, str] = field(default_factory=dict)  # path -> "edited" | "written"
    read: list[str] = field(default_factory=list)
    commands: list[facts.Command] = field(default_factory=list)
    commits: list[facts.Commit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    subagents: list[str] = field(default_factory=list)
    compactions: int = 0
    last_assistant: str | None = None
    recent: list[dict[str, Any]] = field(default_factory=list)

    @property
    def has_work(self) -> bool:
        return bool(self.prompts or self.tools or self.last_assistant)

    @property
    def files(self) -> list[str]:
        """The files the session changed (what the handoff and frontmatter list)."""
        return list(self.edited)

    @property
    def title(self) -> str:
        for prompt in self.prompts:
            line = _SPACES.sub(" ", prompt).strip()
            if line and not line.startswith("/"):
                return line[:TITLE_CHARS].rstrip() + ("…" if len(line) > TITLE_CHARS else "")
        return f"Session {self.session_id}"

    @property
    def decisions(self) -> list[str]:
        return facts.decisions(self.prompts + self.answers)

    @property
    def open_questions(self) -> list[str]:
        return facts.open_questions(self.prompts, self.answers)

    @property
    def next_steps(self) -> list[str]:
        return facts.next_steps(self.answers, self.prompts)

    @property
    def summary(self) -> str:
        """One paragraph a person can read: what was asked, done, and how it ended."""
        goal = f"{self.agent} session on: {self.title.rstrip('.!?…')}"
        return "; ".join([goal, *self.outcome_parts])[:500]

    @property
    def outcome(self) -> str:
        """What was done and how it ended, in one line (the summary without the goal)."""
        return "; ".join(self.outcome_parts)[:500]

    @property
    def outcome_parts(self) -> list[str]:
        parts: list[str] = []
        if self.edited:
            shown = ", ".join(list(self.edited)[:4])
            more = f" and {len(self.edited) - 4} more" if len(self.edited) > 4 else ""
            parts.append(f"changed {shown}{more}")
        if self.commands:
            failed = sum(1 for c in self.commands if c.failed)
            parts.append(
                f"ran {len(self.commands)} command(s)" + (f", {failed} failed" if failed else "")
            )
        if self.commits:
            parts.append(f"committed {_SPACES.sub(' ', self.commits[-1].message)[:80]}")
        if self.last_assistant:
            first = facts.sentences(self.last_assistant[:2000])
            if first:
                parts.append(f"last: {first[0][:160]}")
        return parts


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
        root=checkout_root(row["cwd"]),
    )
    # In the order they happened: an event retried from a spool is dated when it was
    # captured but stored after the ones delivered meanwhile (a stable sort keeps ties).
    rows = sorted(conn.execute(SESSION_EVENTS, (*key, MAX_ROWS)), key=itemgetter("created_at"))
    _Reader(digest).read(rows)
    if recent_limit:
        digest.recent = [dict(r) for r in rows[-recent_limit:]]
    return digest


class _Reader:
    """Folds the observations into the digest, one at a time, in order."""

    def __init__(self, digest: SessionDigest) -> None:
        self.digest = digest
        self.prompt_chars = 0
        self.tools: dict[str, int] = {}
        self.pre_tools: dict[str, int] = {}
        self.read_files: dict[str, None] = {}

    def read(self, rows: list[sqlite3.Row]) -> None:
        for row in rows:
            kind, body = row["kind"], row["body"]
            meta = _meta(row["meta"])
            if kind == "user-prompt" and body.strip():
                self._prompt(body)
            elif kind == "stop" and body.strip():
                self._answer(body)
            elif kind == "subagent-stop" and body.strip():
                who = meta.get("agent_type") or "subagent"
                self.digest.subagents.append(f"{who}: {_SPACES.sub(' ', body)[:300]}")
            elif kind == "post-compaction":
                self.digest.compactions += 1
            elif kind == "post-tool-use":
                self._tool(row["tool_name"] or "tool", body, meta, self.tools)
            elif kind == "pre-tool-use":
                name = row["tool_name"] or "tool"
                self.pre_tools[name] = self.pre_tools.get(name, 0) + 1
        counts = self.tools or self.pre_tools
        self.digest.tools = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        self.digest.read = [f for f in self.read_files if f not in self.digest.edited]
        self.digest.read = self.digest.read[:MAX_LISTED]

    def _prompt(self, body: str) -> None:
        if self.prompt_chars + len(body) > PROMPTS_TOTAL_CAP:
            self.digest.prompts_cut += 1
            return
        self.prompt_chars += len(body)
        self.digest.prompts.append(body)

    def _answer(self, body: str) -> None:
        digest = self.digest
        digest.last_assistant = body
        message = body if len(body) <= TURN_CHARS else body[: TURN_CHARS - 1] + "…"
        digest.answers.append(message)
        if len(digest.answers) > MAX_TURNS:  # keep the first three and the latest ones
            del digest.answers[3]
            digest.answers_cut += 1

    def _tool(self, name: str, body: str, meta: dict[str, Any], counts: dict[str, int]) -> None:
        counts[name] = counts.get(name, 0) + 1
        action = meta.get("action")
        failed = meta.get("failed") is True
        code = meta.get("exit_code") if isinstance(meta.get("exit_code"), int) else None
        relative = [self._relative(f) for f in meta.get("files") or [] if isinstance(f, str)]
        files = [f for f in relative if f is not None]
        if action == "edit":
            verb = "written" if name.casefold() in _WRITE_TOOLS else "edited"
            for path in files:
                if len(self.digest.edited) < MAX_LISTED:
                    self.digest.edited.setdefault(path, verb)
        elif action in ("read", "search"):
            for path in files:
                self.read_files.setdefault(path, None)
        elif action == "run" and len(self.digest.commands) < MAX_LISTED:
            command, commit = facts.command_of(name, body, failed, code)
            self.digest.commands.append(command)
            if commit is not None:
                self.digest.commits.append(commit)
        if failed and len(self.digest.errors) < facts.MAX_FACTS:
            text, result, error = facts.split_tool_body(body, name)
            detail = facts.without_exit_line(error or result)
            self.digest.errors.append(
                f"{name} {_SPACES.sub(' ', text)[:120]}: {_SPACES.sub(' ', detail)[:240]}"
            )

    def _relative(self, path: str) -> str | None:
        return relative_path(path, self.digest.root)


def relative_path(path: str, root: str | None) -> str | None:
    """A path relative to the checkout ``root``; the checkout itself is no file."""
    clean = path.strip()
    if not root or not clean.startswith("/"):
        return clean or None
    normal = os.path.normpath(clean)
    if normal == root:
        return None
    if normal.startswith(root.rstrip("/") + "/"):
        return normal[len(root.rstrip("/")) + 1 :]
    return normal


def checkout_root(cwd: str | None) -> str | None:
    """The checkout a session ran in (its marker or git root), else its directory."""
    if not cwd or not cwd.startswith("/"):
        return None
    try:
        return os.path.normpath(resolve_project(cwd).root)
    except (OSError, ValueError):
        return os.path.normpath(cwd)


def _meta(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


# The page itself is rendered in session_render; re-exported for the session lifecycle.
from ai_memory.hooks.session_render import render_page  # noqa: E402

__all__ = ["SESSION_STATS", "SessionDigest", "read_digest", "render_page"]
