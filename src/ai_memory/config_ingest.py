"""The server's capture filter, [ingest]: kinds of events it never stores.

Names are checked at start-up: an unknown event kind, or a session's start or
end (a session must be able to open and close), stops the server with a
message naming it, rather than silently dropping nothing or too much.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ai_memory.hooks.aliases import OBSERVATION_KINDS, event_kind

UNDROPPABLE = frozenset({"session-start", "session-end"})


class IngestSettings(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_default=True, defer_build=True
    )

    drop_events: list[str] = Field(
        [],
        description="event kinds dropped before storage (user-prompt, pre-tool-use, "
        "post-tool-use, stop, …; an agent's own name such as PostToolUse works too); "
        "session-start and session-end cannot be dropped",
    )
    drop_tool_names: list[str] = Field(
        [],
        description="tool names whose events are dropped (case-insensitive; * and ? globs, "
        "e.g. mcp__github__*)",
    )
    drop_tool_use_id_prefixes: list[str] = Field(
        [], description="tool-use id prefixes whose events are dropped"
    )

    @field_validator("drop_events")
    @classmethod
    def _known_events(cls, names: list[str]) -> list[str]:
        kinds: list[str] = []
        for name in names:
            kind = name if name in OBSERVATION_KINDS else event_kind("generic", name.strip())
            if kind == "other" and name != "other":
                known = ", ".join(sorted(OBSERVATION_KINDS - UNDROPPABLE))
                raise ValueError(f"unknown event {name!r}; known: {known}")
            if kind in UNDROPPABLE:
                raise ValueError(f"{name!r} cannot be dropped: sessions must start and end")
            kinds.append(kind)
        return sorted(set(kinds))

    @field_validator("drop_tool_names", "drop_tool_use_id_prefixes")
    @classmethod
    def _not_blank(cls, names: list[str]) -> list[str]:
        for name in names:
            if not name.strip() or len(name) > 200:
                raise ValueError(f"{name[:40]!r} must be 1-200 characters, not blank")
        return [name.strip() for name in names]


class BackfillSettings(BaseModel):
    """[backfill]: importing the agents' past sessions by itself (``ai-memory backfill``
    imports them on demand). Off by default: it reads the agents' transcripts."""

    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

    on_start: bool = Field(
        False,
        description="the first session start in a project with no sessions imports that "
        "project's own past sessions, once, in the background",
    )
    max_sessions: int = Field(
        200, ge=1, le=100_000, description="on_start: the most past sessions imported (newest)"
    )
    max_seconds: float = Field(
        120.0, gt=0, le=3600, description="on_start: how long one project's import may run"
    )
