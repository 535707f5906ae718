"""A message row as every surface shows it: both ends, who sent and claimed it, its text.

The text came from another project, so it is shown neutralised (it can neither close
nor open the untrusted-history fence, nor fake a chat-role tag) beside the fence's note;
the CLI prints it inside the fence itself.
"""

from __future__ import annotations

from typing import Any

from ai_memory.core.fence import NOTE, fence, neutralise
from ai_memory.core.principal import ROOT_NAME

PREVIEW_CHARS = 200


def shown(row: dict[str, Any], *, body: bool) -> dict[str, Any]:
    """``body``: the whole text (a pop, a send, a cancel); else a preview (a listing)."""
    text = str(row["body"])
    data: dict[str, Any] = {
        "id": row["id"],
        "from": {"workspace": row["from_workspace"], "project": row["from_project"]},
        "to": {"workspace": row["to_workspace"], "project": row["to_project"]},
        "to_agent": row["to_agent"],
        "subject": neutralise(row["subject"]),
        "status": row["status"],
        "created_at": row["created_at"],
        "sender": _name(row["sender_user"], row["sender_name"]),
        "sender_agent": row["sender_agent"],
        "sender_session": row["sender_session"],
        "claimed_at": row["claimed_at"],
        "claimed_by": (
            _name(row["claimed_by_user"], row["claimed_by_name"])
            if row["status"] == "claimed"
            else None
        ),
        "claimed_by_agent": row["claimed_by_agent"],
        "cancelled_at": row["cancelled_at"],
        "body_chars": len(text),
    }
    if body:
        data["body"] = neutralise(text)
    else:
        data["preview"] = neutralise(text[:PREVIEW_CHARS])
    return data


def fenced(message: dict[str, Any]) -> str:
    """The message as an agent should read it: a header, then the body inside the fence."""
    source = f"message {message['id']} from {_where(message['from'])}"
    head = f"{NOTE}\nsubject: {message['subject']}"
    return f"{head}\n{fence(message.get('body') or message.get('preview') or '', source)}"


def _where(end: dict[str, str]) -> str:
    return f"{end['workspace']}/{end['project']}"


def _name(user_id: int | None, name: str | None) -> str:
    if user_id is None:
        return ROOT_NAME
    return name or f"user #{user_id}"
