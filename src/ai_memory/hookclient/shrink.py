"""Cutting an agent's payload to what the server can use, before it is spooled and sent.

Standard library only. The server keeps at most 16 KiB of any field (and reads
at most 64 KiB of it), so larger strings, however deeply nested in
``tool_input``/``tool_response``, are cut here: spooled events stay small and a
batch of them stays under the server's request limit.
"""

from __future__ import annotations

from ai_memory.hookclient.patterns import cut_at_token

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FIELD_CAP = 64 * 1024
SMALL_FIELD_CAP = 4 * 1024
MAX_ITEMS = 500
MAX_DEPTH = 40


def shrink(payload: dict[str, Any], cap: int = FIELD_CAP) -> dict[str, Any]:
    """``payload`` with every string cut to ``cap`` characters and long lists shortened."""
    value = _shrink(payload, cap, 0)
    return value if isinstance(value, dict) else {}


def _shrink(value: Any, cap: int, depth: int) -> Any:
    if isinstance(value, str):
        return cut(value, cap) if len(value) > cap else value
    if depth >= MAX_DEPTH:
        return None
    if isinstance(value, dict):
        return {str(k)[:cap]: _shrink(v, cap, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        kept = [_shrink(v, cap, depth + 1) for v in value[:MAX_ITEMS]]
        if len(value) > MAX_ITEMS:
            kept.append(f"[... {len(value) - MAX_ITEMS} more items cut]")
        return kept
    return value


def cut(text: str, cap: int) -> str:
    """``text`` cut hard at ``cap`` characters, the token crossing the cut dropped, marked.

    The token goes whole, so no half of a secret is sent where no pattern could see it.
    """
    head = cut_at_token(text, cap)
    return f"{head}\n[... cut {len(text) - len(head)} characters]"
