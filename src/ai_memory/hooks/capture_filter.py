"""The server's capture filter: the ``[ingest]`` lists, applied before anything is stored.

An event it drops is acknowledged (202, so the hook client lets it go) and
then forgotten: it is not stored, not indexed, not logged, and it ends no
session. The lists are checked at start-up (:class:`~ai_memory.config_ingest.IngestSettings`).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from ai_memory.config_ingest import IngestSettings
from ai_memory.hooks.ingest import HookEvent

# Where agents put a tool call's id: Claude Code and Codex, Gemini, Cursor, OpenCode.
TOOL_USE_ID_KEYS = ("tool_use_id", "toolUseId", "tool_call_id", "toolCallId", "call_id", "callID")


class CaptureFilter:
    """Decides, per parsed event, whether the ``[ingest]`` lists drop it."""

    def __init__(self, settings: IngestSettings) -> None:
        self.events = frozenset(settings.drop_events)
        self.tools = tuple(name.casefold() for name in settings.drop_tool_names)
        self.prefixes = tuple(settings.drop_tool_use_id_prefixes)

    @property
    def active(self) -> bool:
        return bool(self.events or self.tools or self.prefixes)

    def drops(self, event: HookEvent, body: object) -> bool:
        """Whether ``event`` (parsed from ``body``) is to be forgotten."""
        if not self.active:
            return False
        obs = event.observation
        if obs.kind in self.events:
            return True
        if self.tools and obs.tool_name:
            name = obs.tool_name.casefold()
            if any(fnmatchcase(name, pattern) for pattern in self.tools):
                return True
        return bool(self.prefixes) and _tool_use_id(body).startswith(self.prefixes)


def _tool_use_id(body: object) -> str:
    if not isinstance(body, Mapping):
        return ""
    for key in TOOL_USE_ID_KEYS:
        value = body.get(key)
        if isinstance(value, str) and value:
            return value
    return ""
