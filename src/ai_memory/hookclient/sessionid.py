"""Cleaning an agent's session id into a page-name-safe one; shared by the hook client and server.

Standard library only.
"""

from __future__ import annotations

import re

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def safe_session_id(value: str) -> str | None:
    """Anything unusual is folded to ``-``; at most 100 characters; None when nothing is left."""
    return _UNSAFE.sub("-", value.strip()).strip("-.")[:100] or None
