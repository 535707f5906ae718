"""One alias table per agent: its event names and payload fields, mapped to ours.

Agents rename things between releases, so every lookup is tolerant: a field
is found under any of its aliases, an unknown event becomes ``other``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, get_args

ObservationKind = Literal[
    "session-start",
    "user-prompt",
    "pre-tool-use",
    "post-tool-use",
    "pre-compact",
    "post-compaction",
    "notification",
    "stop",
    "subagent-start",
    "subagent-stop",
    "session-end",
    "other",
]
OBSERVATION_KINDS: frozenset[str] = frozenset(get_args(ObservationKind))
AGENTS = ("claude-code", "codex", "gemini", "cursor", "opencode", "generic")

# Field aliases shared by every agent; the first one present wins.
FIELDS: Mapping[str, tuple[str, ...]] = {
    "session_id": ("session_id", "sessionId", "conversation_id", "conversationId", "session"),
    "cwd": ("cwd", "working_directory", "workspace_root", "directory"),
    "prompt": ("prompt", "user_prompt", "message_text", "text", "input"),
    "tool_name": ("tool_name", "toolName", "tool", "name"),
    "tool_input": ("tool_input", "toolInput", "tool_args", "args", "arguments", "input"),
    "tool_response": ("tool_response", "toolResponse", "tool_output", "output", "result"),
    "assistant": (
        "last_assistant_message",
        "lastAssistantMessage",
        "prompt_response",
        "response",
        "assistant_message",
        "text",  # Cursor's afterAgentResponse
    ),
    "summary": ("compact_summary", "compactSummary", "summary"),
    "instructions": ("custom_instructions", "customInstructions", "trigger"),
    "message": ("message", "title", "text"),
    "reason": ("reason", "source", "status", "trigger"),
    "error": ("error", "error_message", "errorMessage", "tool_error"),
    "exit_code": ("exit_code", "exitCode", "exit_status", "returncode"),
    "agent_id": ("agent_id", "agentId", "subagent_id"),
    "agent_type": ("agent_type", "agentType", "subagent_type"),
    "event": ("hook_event_name", "hookEventName", "event", "type"),
}

_COMMON: dict[str, str] = {kind: kind for kind in OBSERVATION_KINDS}
_CLAUDE: dict[str, str] = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt",
    "PreToolUse": "pre-tool-use",
    "PostToolUse": "post-tool-use",
    "PostToolUseFailure": "post-tool-use",
    "PreCompact": "pre-compact",
    "PostCompact": "post-compaction",
    "Notification": "notification",
    "Stop": "stop",
    "SubagentStop": "subagent-stop",
    "SubagentStart": "subagent-start",
    "SessionEnd": "session-end",
}
_GEMINI: dict[str, str] = {
    "SessionStart": "session-start",
    "SessionEnd": "session-end",
    "BeforeAgent": "user-prompt",
    "AfterAgent": "stop",
    "BeforeTool": "pre-tool-use",
    "AfterTool": "post-tool-use",
    "PreCompress": "pre-compact",
    "Notification": "notification",
}
_CURSOR: dict[str, str] = {
    "sessionStart": "session-start",
    "beforeSubmitPrompt": "user-prompt",
    "beforeShellExecution": "pre-tool-use",
    "beforeMCPExecution": "pre-tool-use",
    "beforeReadFile": "pre-tool-use",
    "afterShellExecution": "post-tool-use",
    "afterMCPExecution": "post-tool-use",
    "afterFileEdit": "post-tool-use",
    "afterAgentResponse": "stop",
    "stop": "stop",
    "sessionEnd": "session-end",
}
_OPENCODE: dict[str, str] = {
    "session.created": "session-start",
    "session.idle": "stop",
    "session.compacted": "post-compaction",
    "session.deleted": "session-end",
    "message.user": "user-prompt",
    "chat.message": "user-prompt",
    "tool.execute.before": "pre-tool-use",
    "tool.execute.after": "post-tool-use",
}

EVENTS: Mapping[str, Mapping[str, str]] = {
    "claude-code": {**_COMMON, **_CLAUDE},
    "codex": {**_COMMON, **_CLAUDE},
    "gemini": {**_COMMON, **_GEMINI},
    "cursor": {**_COMMON, **_CURSOR},
    "opencode": {**_COMMON, **_OPENCODE},
    "generic": {**_COMMON, **_OPENCODE, **_CURSOR, **_GEMINI, **_CLAUDE},
}
_FOLDED: Mapping[str, Mapping[str, str]] = {
    agent: {name.casefold().replace("_", "").replace("-", ""): kind for name, kind in table.items()}
    for agent, table in EVENTS.items()
}

# Tools a Cursor-style agent reports through the event itself rather than a field.
EVENT_TOOLS: Mapping[str, str] = {
    "beforeShellExecution": "Shell",
    "afterShellExecution": "Shell",
    "beforeReadFile": "Read",
    "afterFileEdit": "Edit",
    "beforeMCPExecution": "MCP",
    "afterMCPExecution": "MCP",
}


# The fields an event keeps, in this order (an ``other`` event's body is them, as JSON).
_NORMALISED = (
    "prompt",
    "tool_name",
    "tool_input",
    "tool_response",
    "assistant",
    "summary",
    "instructions",
    "message",
    "reason",
    "error",
    "exit_code",
    "agent_id",
    "agent_type",
)
_UNRANKED = len(max(FIELDS.values(), key=len))


def _alias_index(
    fields: Mapping[str, tuple[str, ...]],
) -> MappingProxyType[str, tuple[tuple[str, int], ...]]:
    """Each alias with the fields it may fill and its place among each one's aliases."""
    index: dict[str, list[tuple[str, int]]] = {}
    for field, names in fields.items():
        for rank, alias in enumerate(names):
            index.setdefault(alias, []).append((field, rank))
    return MappingProxyType({alias: tuple(entries) for alias, entries in index.items()})


_BY_ALIAS = _alias_index(FIELDS)
# Events that report a tool call that failed (its error is in ``error``).
FAILURE_EVENTS = frozenset({"PostToolUseFailure", "postToolUseFailure", "AfterToolFailure"})


@dataclass(slots=True)
class Normalised:
    """The agent's event as our kind plus the fields we found, still unsanitised.

    Not frozen: it lives from :func:`normalise` to the sanitizer, its ``fields`` could be
    changed all the same, and a frozen class pays a slow attribute set per field, on every
    event."""

    agent: str
    kind: str
    event: str
    fields: dict[str, object]


def table_for(agent: str) -> str:
    """The alias table an agent name uses; unknown agents fall back to ``generic``."""
    return agent if agent in EVENTS else "generic"


def event_kind(agent: str, event: str) -> str:
    table = table_for(agent)
    kind = EVENTS[table].get(event)
    if kind is None:
        kind = _FOLDED[table].get(event.casefold().replace("_", "").replace("-", ""))
    return kind or "other"


def pick(payload: Mapping[str, object], name: str) -> object | None:
    for alias in FIELDS[name]:
        value = payload.get(alias)
        if value is not None and value != "":
            return value
    return None


def picked(payload: Mapping[str, object]) -> dict[str, object]:
    """What :func:`pick` finds for every field of :data:`FIELDS` the payload holds.

    One walk over the payload's keys (through :data:`_BY_ALIAS`) instead of a lookup per
    alias of every field: the alias listed first still wins, a None or "" still counts as
    absent."""
    found: dict[str, object] = {}
    ranks: dict[str, int] = {}
    for key, value in payload.items():
        entries = _BY_ALIAS.get(key)
        if entries is None or value is None or value == "":
            continue
        for field, rank in entries:
            if ranks.get(field, _UNRANKED) > rank:
                ranks[field] = rank
                found[field] = value
    return found


def normalise(
    agent: str,
    event: str | None,
    payload: Mapping[str, object],
    found: Mapping[str, object] | None = None,
) -> Normalised:
    """Map ``event`` (or the payload's own event name) to a kind and pick the known fields
    (``found``: the payload's :func:`picked`, when the caller has it already)."""
    if found is None:
        found = picked(payload)
    name = event or _text(found.get("event")) or ""
    kind = event_kind(agent, name) if name else "other"
    fields = {field: found[field] for field in _NORMALISED if field in found}
    if "tool_name" not in fields and name in EVENT_TOOLS:
        fields["tool_name"] = EVENT_TOOLS[name]
    if name in EVENT_TOOLS and "tool_input" not in fields:
        fields["tool_input"] = {
            k: v for k, v in payload.items() if k in ("command", "file_path", "edits", "tool_name")
        }
    if name in FAILURE_EVENTS or (kind == "post-tool-use" and payload.get("success") is False):
        fields["failed"] = True
    return Normalised(agent, kind, name, fields)


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None
