"""A session page a person wants to read: goal, what was asked, what changed, what ran,
what was decided and what is left, then the evidence (every turn's final message).

Captured text stays inert content: one-line items have their link syntax broken,
longer text sits in code blocks no backtick run inside can close.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ai_memory.hooks.session_page import SessionDigest

_SPACES = re.compile(r"\s+")
_BACKTICKS = re.compile(r"`+")
# Link syntax in captured text ("[[page]]", "[label](page.md)") must not become a real link.
_LINK_OPENERS = re.compile(r"\[(?=\[)|\](?=\()")
_ZWSP = "\u200b"
ITEM_CHARS = 300


def render_page(digest: SessionDigest, ended_at: str) -> tuple[str, dict[str, Any]]:
    """The page body (markdown) and its frontmatter fields."""
    lines = [f"# {_one_line(digest.title)}", ""]
    if digest.outcome:
        outcome = _one_line(digest.outcome[:1].upper() + digest.outcome[1:])
        lines += [outcome if outcome.endswith((".", "!", "?")) else outcome + ".", ""]
    lines += [
        f"- Agent: {digest.agent}",
        f"- Session: `{digest.session_id}`",
        f"- Started: {digest.started_at}",
        f"- Ended: {ended_at} ({digest.end_reason or 'session-end'})",
    ]
    if digest.cwd:
        lines.append(f"- Directory: `{_one_line(digest.cwd)}`")
    lines += _goal(digest) + _asked(digest) + _changed(digest) + _commands(digest)
    lines += _listed("Commits", [_commit(c.sha, c.message) for c in digest.commits])
    lines += _listed("Errors met", digest.errors)
    lines += _listed("Decisions", digest.decisions)
    lines += _listed("Open questions", digest.open_questions)
    lines += _listed("Next steps", digest.next_steps)
    lines += _listed("Subagents", digest.subagents)
    lines += _ending(digest) + _answers(digest) + _tool_calls(digest) + _timeline(digest)
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
    return "\n".join(lines).rstrip("\n") + "\n", meta


def _goal(digest: SessionDigest) -> list[str]:
    lines = ["", "## Goal", ""]
    if not digest.prompts:
        return [*lines, "(no prompt captured)"]
    return [*lines, _escape_block(digest.prompts[0].strip())]


def _asked(digest: SessionDigest) -> list[str]:
    later = digest.prompts[1:]
    if not later and not digest.prompts_cut:
        return []
    lines = ["", "## What was asked", ""]
    for number, prompt in enumerate(later, 2):
        short = len(prompt) <= ITEM_CHARS and "\n" not in prompt.strip()
        if short:
            lines.append(f"{number}. {_item(prompt)}")
        else:  # in full: a session page is the evidence for what was said
            lines += ["", f"Prompt {number}:", "", _escape_block(prompt), ""]
    if digest.prompts_cut:
        lines.append(f"({digest.prompts_cut} more prompt(s) not shown: size limit)")
    return lines


def _changed(digest: SessionDigest) -> list[str]:
    lines = ["", "## What changed", ""]
    if digest.edited:
        lines += [f"- {_code(path)} ({verb})" for path, verb in digest.edited.items()]
    else:
        lines.append("(no file edited)")
    if digest.read:
        lines += ["", "Read, not changed: " + ", ".join(_code(path) for path in digest.read)]
    return lines


def _commands(digest: SessionDigest) -> list[str]:
    if not digest.commands:
        return []
    lines = ["", "## Commands run", ""]
    for command in digest.commands:
        text = command.text if len(command.text) <= 200 else command.text[:199] + "…"
        lines.append(f"- {_code(text)} — {_one_line(command.outcome)}")
    return lines


def _listed(heading: str, items: list[str]) -> list[str]:
    if not items:
        return []
    return ["", f"## {heading}", "", *(f"- {_item(item)}" for item in items)]


def _ending(digest: SessionDigest) -> list[str]:
    reason = digest.end_reason or "session-end"
    turns = len(digest.prompts)
    line = f"Ended ({reason}) after {turns} prompt(s) and {len(digest.commands)} command(s)"
    if digest.compactions:
        line += f", {digest.compactions} compaction(s)"
    last_failed = next((c for c in reversed(digest.commands)), None)
    if last_failed is not None and last_failed.failed:
        line += f"; the last command failed: {_code(last_failed.text[:120])}"
    lines = ["", "## How it ended", "", line + "."]
    if digest.last_assistant:
        lines += ["", "Last assistant message:", "", _escape_block(digest.last_assistant)]
    return lines


def _answers(digest: SessionDigest) -> list[str]:
    if len(digest.answers) <= 1:
        return []
    shown = len(digest.answers)
    cut = f", {digest.answers_cut} from the middle not shown" if digest.answers_cut else ""
    lines = ["", f"## Assistant messages ({shown} turn(s){cut})", ""]
    for number, answer in enumerate(digest.answers, 1):
        lines += [f"### Turn {number}", "", _escape_block(answer), ""]
    return lines[:-1]


def _tool_calls(digest: SessionDigest) -> list[str]:
    lines = ["", "## Tool calls", ""]
    if not digest.tools:
        return [*lines, "(none)"]
    return [*lines, *(f"- {_one_line(name)}: {n}" for name, n in digest.tools)]


def _timeline(digest: SessionDigest) -> list[str]:
    if not digest.recent:
        return []
    lines = ["", f"## Timeline (last {len(digest.recent)} of {digest.observation_count} events)"]
    lines.append("")
    for obs in digest.recent:
        excerpt = _one_line(obs["body"][:400])[:160]
        tool = f" {_one_line(obs['tool_name'])}" if obs["tool_name"] else ""
        lines.append(f"- {obs['created_at']} {obs['kind']}{tool}: {excerpt}")
    return lines


def _commit(sha: str | None, message: str) -> str:
    return f"{sha[:12]} {message}" if sha else message


def _item(text: str) -> str:
    line = _SPACES.sub(" ", text).strip()
    return _one_line(line if len(line) <= ITEM_CHARS else line[: ITEM_CHARS - 1] + "…")


def _code(text: str) -> str:
    """Inline code no backtick inside can close, on one line."""
    flat = _SPACES.sub(" ", text).strip()
    longest = max((len(run) for run in _BACKTICKS.findall(flat)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{fence}{pad}{_no_links(flat)}{pad}{fence}"


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
