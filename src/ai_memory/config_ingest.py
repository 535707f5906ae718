"""The server's capture filter, [ingest]: kinds of events it never stores."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class IngestSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)

    drop_events: list[str] = Field([], description="event kinds dropped before storage")
    drop_tool_names: list[str] = Field([], description="tool names whose events are dropped")
    drop_tool_use_id_prefixes: list[str] = Field(
        [], description="tool-use id prefixes whose events are dropped"
    )
