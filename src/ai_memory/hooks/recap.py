"""Re-grounding a session in its own work: after a compaction, or when asked to recap.

A compaction leaves the agent with a summary of its own making; what the user
actually asked and what was changed is read back from the capture and handed
over inside the fence, instead of a second copy of the start packet.
"""

from __future__ import annotations

from typing import Any


def anchor_text(session_id: str, snapshot: dict[str, Any] | None) -> str | None:
    """The session's own goal, latest prompts, files changed and last answer, or None."""
    if snapshot is None:
        return None
    lines = [f"## Re-grounding: this session ({session_id}) so far, as captured"]
    if snapshot.get("first_prompt"):
        lines.append(f"Goal (first prompt): {_line(snapshot['first_prompt'], 500)}")
    prompts = [p for p in snapshot.get("last_prompts") or [] if p != snapshot.get("first_prompt")]
    if prompts:
        lines.append("Latest prompts:")
        lines += [f"- {_line(p, 300)}" for p in prompts]
    if snapshot.get("files_edited"):
        lines.append("Files changed so far: " + ", ".join(snapshot["files_edited"]))
    if snapshot.get("last_assistant_message"):
        lines.append(f"Last answer: {_line(snapshot['last_assistant_message'], 500)}")
    return "\n".join(lines) + "\n"


def claimed_note(handoff: dict[str, Any] | None) -> str:
    """One line naming the handoff the session started from (not the whole of it again)."""
    if handoff is None:
        return ""
    page = (handoff.get("content") or {}).get("page")
    where = f" (see {page})" if page else ""
    return f"Started from the handoff: {_line(str(handoff['summary']), 300)}{where}\n"


def _line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
