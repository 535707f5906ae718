"""Whether a string can be stored as text: the check behind ``core.validate``.

Kept apart from ``core.validate`` (whose field types need pydantic) so that path
checks, and every command that resolves a path, load no more than ``re``.
"""

from __future__ import annotations

import re

_BAD_CHAR = re.compile("[\x00\ud800-\udfff]")


def text_problem(value: str) -> str | None:
    """Why ``value`` cannot be stored as text, or None when it can."""
    if "\x00" not in value and (value.isascii() or _encodable(value)):
        return None  # the usual case, checked at C speed: no NUL, no surrogate
    bad = _BAD_CHAR.search(value)
    if bad is None:
        return None
    char = bad.group()
    if char == "\x00":
        return f"contains a NUL character (at {bad.start()})"
    return (
        f"contains a lone surrogate U+{ord(char):04X} (at {bad.start()}); "
        "text must be valid Unicode"
    )


def _encodable(value: str) -> bool:
    """UTF-8 encodes every code point but a surrogate."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
