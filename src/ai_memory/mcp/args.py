"""Argument types the tools share, so every schema says the same thing the same way.

The rules themselves live in :mod:`ai_memory.core.validate` and
:mod:`ai_memory.core.paths`; the HTTP models use the same ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from pydantic import Field

from ai_memory.core.paths import MAX_PATH_BYTES
from ai_memory.core.validate import SqlId, json_problem

__all__ = [
    "BeforeId",
    "ExpectedPageId",
    "HandoffId",
    "KindName",
    "Limit",
    "OptionalPagePath",
    "PageId",
    "PagePath",
    "Project",
    "SqlId",
    "TierName",
    "Version",
    "Workspace",
    "check_text_arguments",
]

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
        max_length=MAX_PATH_BYTES,
        description="Page path inside the project, ending in .md, e.g. decisions/db.md",
    ),
]
OptionalPagePath = Annotated[
    str | None,
    Field(max_length=MAX_PATH_BYTES, description="Exact page path, e.g. decisions/db.md"),
]
PageId = Annotated[SqlId | None, Field(description="A page version id (page_id).")]
Version = Annotated[SqlId | None, Field(description="An older version number")]
ExpectedPageId = Annotated[
    SqlId | None, Field(description="Write only if the page is still this version")
]
HandoffId = Annotated[SqlId, Field(description="The handoff's id (from memory_handoff_list)")]
BeforeId = Annotated[SqlId | None, Field(description="Page on: next_before_id of the last answer")]
Limit = Annotated[int, Field(ge=1, le=100, description="How many results (1-100).")]
KindName = Literal[
    "session", "concept", "decision", "gotcha", "procedure", "rule", "slot", "note", "lint"
]
TierName = Literal["working", "episodic", "semantic", "procedural"]


def check_text_arguments(arguments: Mapping[str, Any]) -> None:
    """Refuse, as -32602 naming the argument, any string (at any depth) that cannot be
    stored: a NUL or a lone surrogate. One check for every tool, before any tool runs."""
    for name, value in arguments.items():
        found = json_problem(value, name)
        if found:
            where, problem = found
            raise MCPError(
                INVALID_PARAMS,
                f"invalid argument {where!r}: {problem}",
                {"error": "invalid_input", "argument": name},
            )
