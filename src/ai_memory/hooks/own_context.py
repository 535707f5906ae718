"""Our own injected context, recognised and cut out of captured text before it is stored.

Agents can hand our session-start packet back to us: Gemini CLI in ``-p`` mode
prepends it to the prompt that ``BeforeAgent`` reports, a model may quote it, a
tool may read a transcript holding it. Stored, it would become the session's
title, the next handoff and a page that ranks first for every search. So every
captured field loses it here, in any case or separator spelling of the fence
and the note, with or without the wrapper an agent put around it.
"""

from __future__ import annotations

import re

from ai_memory.core.fence import NOTE

# The words every packet starts with: case and the spaces between them ignored.
_NOTE_HEAD = r"recorded\s+history\s+from\s+ai[\s_.-]*memory\b"
# An agent may hand our tags back HTML-escaped (Gemini CLI: &lt;untrusted-history&gt;).
_LT = r"(?:<|&lt;|&#0*60;|&#x0*3c;)"
_GT = r"(?:>|&gt;|&#0*62;|&#x0*3e;)"
_FENCE_OPEN = rf"{_LT}\s*untrusted[\s_.:-]*history\b[^<>]{{0,400}}?{_GT}"
_FENCE_CLOSE = rf"{_LT}\s*/\s*untrusted[\s_.:-]*history\s*{_GT}"
# A wrapper an agent puts around injected context (Gemini: <hook_context>…</hook_context>).
_WRAP_NAMES = r"(?:hook|additional|session)[\s_-]*context"
_WRAP_OPEN = rf"{_LT}\s*{_WRAP_NAMES}\s*{_GT}"

_START = re.compile(rf"(?:{_WRAP_OPEN}\s*)?(?:{_NOTE_HEAD}|{_FENCE_OPEN})", re.IGNORECASE)
_OPEN = re.compile(_FENCE_OPEN, re.IGNORECASE)
_CLOSE = re.compile(_FENCE_CLOSE, re.IGNORECASE)
_WRAP_CLOSE = re.compile(rf"\s*{_LT}\s*/\s*{_WRAP_NAMES}\s*{_GT}", re.IGNORECASE)
_PARAGRAPH_END = re.compile(r"\n[ \t]*\n")


def might_hold_packet(text: str) -> bool:
    """A fast test that lets nearly every field through untouched: only text holding
    "untrusted", "ai-memory", "ai_memory" or "ai memory" (any case) is looked at further."""
    if len(text) < 24:
        return False
    lowered = text[:200_000].lower()
    # Written out: a generator over the words cost more than the searches themselves.
    return "untrusted" in lowered or (
        "memory" in lowered
        and ("ai-memory" in lowered or "ai_memory" in lowered or "ai memory" in lowered)
    )


def strip_own_context(text: str) -> str:
    """``text`` without any packet of ours (fence, note and wrapper), surrounding space tidied.

    One forward scan: each packet is cut from its first sign (wrapper, note or fence) to
    its closing tag (or, when the close was cut away, the end of the note's paragraph).
    """
    if not might_hold_packet(text):
        return text
    kept: list[str] = []
    position = 0
    while (start := _START.search(text, position)) is not None:
        kept.append(text[position : start.start()])
        position = _packet_end(text, start.start(), start.end())
    if not kept:
        return text
    kept.append(text[position:])
    return "\n".join(part.strip() for part in kept if part.strip())


def _packet_end(text: str, start: int, head_end: int) -> int:
    """Where the packet that begins at ``start`` ends (past any wrapper's closing tag)."""
    fence = _OPEN.search(text, start, min(len(text), head_end + 1200))
    if fence is not None:
        close = _CLOSE.search(text, fence.end())
        end = close.end() if close is not None else len(text)
    else:
        paragraph = _PARAGRAPH_END.search(text, head_end)
        end = paragraph.end() if paragraph is not None else len(text)
    wrap = _WRAP_CLOSE.match(text, end)
    return wrap.end() if wrap is not None else max(end, head_end)


def is_own_context(text: str) -> bool:
    """True when ``text`` held a packet of ours and nothing else."""
    return bool(text.strip()) and not strip_own_context(text)


__all__ = ["NOTE", "is_own_context", "might_hold_packet", "strip_own_context"]
