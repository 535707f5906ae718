"""Tool annotations: what a client may assume about a tool before calling it.

Every hint is stated, never left to the protocol's defaults (which assume a
tool is destructive and not idempotent). No tool reaches outside the machine.
"""

from __future__ import annotations

from mcp_types import ToolAnnotations

# Reads change nothing, so repeating one changes nothing either.
READ = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


def change(*, destructive: bool, idempotent: bool) -> ToolAnnotations:
    """A tool that writes. ``destructive``: it can remove or withdraw what others
    rely on (a version kept in history does not count); ``idempotent``: a repeat
    with the same arguments has no further effect."""
    return ToolAnnotations(
        read_only_hint=False,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=False,
    )
