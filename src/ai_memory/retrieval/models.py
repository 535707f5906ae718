"""The request and response of a search: one shape for HTTP, CLI and MCP."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ai_memory.core.errors import InvalidInput
from ai_memory.core.kinds import KINDS, TIERS

MAX_QUERY_CHARS = 2000


class SearchRequest(BaseModel):
    """What to look for, where, and how much to say about it."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    query: str = Field(..., max_length=MAX_QUERY_CHARS)
    limit: int = Field(10, ge=1, le=100)
    workspace: str | None = None
    project: str | None = None
    scopes: list[str] | None = Field(
        None, max_length=50, description="several projects: 'project' or 'workspace/project'"
    )
    global_: bool = Field(False, alias="global", description="search every project")
    kind: str | None = None
    tier: str | None = None
    tag: str | None = Field(None, max_length=200)
    path_prefix: str | None = Field(None, max_length=500)
    include_superseded: bool = False
    include_expired: bool = False
    as_of: str | None = Field(None, max_length=64)
    pin_first: bool = False
    explain: bool = False

    @field_validator("kind")
    @classmethod
    def _kind(cls, value: str | None) -> str | None:
        if value is not None and value not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(sorted(KINDS))}")
        return value

    @field_validator("tier")
    @classmethod
    def _tier(cls, value: str | None) -> str | None:
        if value is not None and value not in TIERS:
            raise ValueError(f"tier must be one of {', '.join(sorted(TIERS))}")
        return value

    @classmethod
    def parse(cls, data: dict[str, Any]) -> SearchRequest:
        """Validate ``data``; problems become :class:`InvalidInput` naming each field."""
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            problems = [
                f"{'.'.join(str(p) for p in error['loc']) or 'request'}: {error['msg']}"
                for error in exc.errors()
            ]
            raise InvalidInput("invalid search: " + "; ".join(problems)) from None


class StreamExplain(BaseModel):
    rank: int
    score: float
    contribution: float
    via: str | None = Field(
        None, description="the stream this one voted through (a session page's one vote)"
    )
    share: float | None = Field(None, description="its part of that stream's score")


class HitExplain(BaseModel):
    streams: dict[str, StreamExplain]
    rrf: float
    authority: float
    authority_parts: dict[str, float]
    matched_entities: list[str] | None = None
    edge: dict[str, Any] | None = None
    observation_id: int | None = None
    turns: list[int] | None = Field(None, description="observation ids of the turns that voted")
    chunk: int | None = None


class Turn(BaseModel):
    """One captured turn of a session hit that matched the query: where the answer is."""

    observation_id: int
    session_id: str
    kind: str
    created_at: str
    snippet: str
    follows: int | None = Field(
        None, description="the matching turn this one replies to (shown for its answer)"
    )


class Hit(BaseModel):
    page_id: int
    version: int
    workspace: str
    project: str
    path: str
    title: str
    kind: str
    tier: str
    snippet: str
    score: float
    pinned: bool | None = None
    superseded: bool | None = None
    expired: bool | None = None
    turns: list[Turn] | None = None
    explain: HitExplain | None = None


class RawHit(BaseModel):
    observation_id: int
    workspace: str
    project: str
    session_id: str
    kind: str
    snippet: str
    created_at: str


class StreamSummary(BaseModel):
    ms: float
    candidates: int
    weight: float
    note: str | None = None


class QueryExplain(BaseModel):
    fts: str
    mode: str
    words: list[str]
    dropped: list[str] = Field(
        default_factory=list, description="words in over half of the pages: no weight in BM25"
    )
    active_streams: list[str]
    streams: dict[str, StreamSummary]


class SearchResponse(BaseModel):
    query: str
    hits: list[Hit]
    raw_hits: list[RawHit]
    global_hits: list[Hit]
    scope: dict[str, Any]
    timings: dict[str, float]
    explain: QueryExplain | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON every surface returns: flags and explain only when they say something."""
        data: dict[str, Any] = self.model_dump(exclude_none=True)
        return data

    def to_json(self) -> bytes:
        """``to_dict`` as JSON text in one pass (half the time of building the dict first)."""
        return self.model_dump_json(exclude_none=True).encode()
