"""Argument types the tools share, so every schema says the same thing the same way."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

Workspace = Annotated[
    str | None,
    Field(description="Workspace of the project (default: 'default'). Usually leave unset."),
]
Project = Annotated[
    str | None,
    Field(
        description="Project to use. Leave unset to use the calling session's project "
        "(or the launch directory's); set it to reach another project."
    ),
]
PagePath = Annotated[
    str,
    Field(
        min_length=1,
        max_length=240,
        description="Page path inside the project, ending in .md, e.g. decisions/db.md",
    ),
]
PageId = Annotated[int | None, Field(ge=1, description="A page version id (page_id).")]
Limit = Annotated[int, Field(ge=1, le=100, description="How many results (1-100).")]
KindName = Literal[
    "session", "concept", "decision", "gotcha", "procedure", "rule", "slot", "note", "lint"
]
TierName = Literal["working", "episodic", "semantic", "procedural"]
