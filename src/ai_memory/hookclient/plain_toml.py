"""Reading a string setting from a plain TOML file without importing ``tomllib``.

Standard library only, and no regular expression either (compiling one costs
the hook client more than the file takes to read). ``tomllib`` costs
milliseconds to import on every run, for a ``.ai-memory.toml`` marker of one
or two lines or the one ``server.url`` of ``config.toml``. :func:`strings` reads
what plainly is a ``key = "string"`` line; whenever the file holds anything
that could change the answer it cannot vouch for (a multi-line string or
array, a dotted key or inline table naming the table, an unusual value in the
table read), it returns ``None`` and the caller asks ``tomllib``.
"""

from __future__ import annotations

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# Control characters TOML refuses in a string (a tab is allowed).
_CONTROL = frozenset(chr(c) for c in (*range(0x09), *range(0x0A, 0x20), 0x7F))


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
            header = _header(line)
            if header is None:
                return None  # an array table, a quoted name, or a multi-line array's line
            current = header
            continue
        key, value = _pair(line)
        if current == table:
            if key is None or value is None or key in found:
                return None
            found[key] = value
        elif not _harmless(key, line, current, table):
            return None
    return found


def _bare(key: str) -> bool:
    return bool(key) and all(ch in _BARE for ch in key)


def _ends_cleanly(rest: str) -> bool:
    rest = rest.strip()
    return not rest or rest.startswith("#")


def _header(line: str) -> str | None:
    """``[a . b]`` gives ``a.b``; None for anything but a plain table header."""
    end = line.find("]")
    if line.startswith("[[") or end < 0 or not _ends_cleanly(line[end + 1 :]):
        return None
    parts = [part.strip() for part in line[1:end].split(".")]
    return ".".join(parts) if all(_bare(part) for part in parts) else None


def _pair(line: str) -> tuple[str | None, str | None]:
    """``(key, string value)`` of ``key = "value"``; None for what is not plainly that."""
    key, eq, rest = line.partition("=")
    key = key.strip()
    if not eq or not _bare(key):
        return None, None
    value = rest.strip()
    quote = value[:1]
    if quote not in ('"', "'"):
        return key, None
    end = value.find(quote, 1)
    inner = value[1:end]
    if end < 0 or not _ends_cleanly(value[end + 1 :]) or any(ch in _CONTROL for ch in inner):
        return key, None
    if quote == '"' and "\\" in inner:
        return key, None  # an escape: tomllib decodes it
    return key, inner


def _harmless(key: str | None, line: str, current: str, table: str) -> bool:
    """A line outside ``table`` that cannot set a key of it or hide a table header."""
    if key is None:
        return False  # a dotted or quoted key, or the inside of a multi-line array
    if current == "" and key == table.partition(".")[0]:
        return False  # ``server = {url = …}`` at the top level
    value = line.partition("=")[2].strip()
    return not value.startswith("[") or value.endswith("]")
