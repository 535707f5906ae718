"""Reading a string setting from a plain TOML file without importing ``tomllib``.

Standard library only. ``tomllib`` costs the hook client milliseconds to import
on every run, for a ``.ai-memory.toml`` marker of one or two lines or the one
``server.url`` of ``config.toml``. :func:`strings` reads what plainly is a
``key = "string"`` line; whenever the file holds anything that could change the
answer it cannot vouch for (a multi-line string or array, a dotted key or
inline table naming the table, an unusual value in the table read), it returns
``None`` and the caller asks ``tomllib``.
"""

from __future__ import annotations

import re

_HEADER = re.compile(r"\[\s*([A-Za-z0-9_-]+(?:\s*\.\s*[A-Za-z0-9_-]+)*)\s*\]")
_CHARS = r"[^\x00-\x08\x0a-\x1f\x7f"
_PAIR = re.compile(
    rf"([A-Za-z0-9_-]+)[ \t]*=[ \t]*(?:\"({_CHARS}\"\\]*)\"|'({_CHARS}']*)')[ \t]*(?:#{_CHARS}]*)?"
)
_KEY = re.compile(r"([A-Za-z0-9_-]+)[ \t]*=")


def strings(text: str, table: str = "") -> dict[str, str] | None:
    """The plain string values of ``table`` ("" for the top level); None: ask ``tomllib``."""
    if '"""' in text or "'''" in text:
        return None
    found: dict[str, str] = {}
    current = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            header = _HEADER.match(line)
            if header is None or not _ends_cleanly(line, header.end()):
                return None  # an array table, a quoted name, or a multi-line array's line
            current = re.sub(r"\s", "", header.group(1))
            continue
        if current == table:
            pair = _PAIR.fullmatch(line)
            if pair is None or pair.group(1) in found:
                return None
            found[pair.group(1)] = pair.group(2) if pair.group(2) is not None else pair.group(3)
        elif not _harmless(line, current, table):
            return None
    return found


def _ends_cleanly(line: str, end: int) -> bool:
    rest = line[end:].strip()
    return not rest or rest.startswith("#")


def _harmless(line: str, current: str, table: str) -> bool:
    """A line outside ``table`` that cannot set a key of it or hide a table header."""
    key = _KEY.match(line)
    if key is None:
        return False  # a dotted or quoted key, or the inside of a multi-line array
    if current == "" and key.group(1) == table.partition(".")[0]:
        return False  # ``server = {url = …}`` at the top level
    value = line[key.end() :].lstrip()
    return not value.startswith("[") or value.rstrip().endswith("]")
