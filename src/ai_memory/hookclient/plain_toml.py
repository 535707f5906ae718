"""Reading plain settings from a small TOML file without importing ``tomllib``.

Standard library only, and no regular expression either (compiling one costs
the hook client more than the file takes to read). ``tomllib`` costs
milliseconds to import on every run, for a ``.ai-memory.toml`` marker of one
or two lines or the one ``server.url`` of ``config.toml``. :func:`strings` reads
what plainly is a ``key = "string"`` line, :func:`values` also ``true``/``false``
and arrays of plain strings (on one line or several); whenever the file holds anything
that could change the answer it cannot vouch for (a multi-line string or
array, a dotted key or inline table naming the table, an unusual value in the
table read), it returns ``None`` and the caller asks ``tomllib``.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` is slow to import: annotations only
    from collections.abc import Iterator

_BARE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-")
# What a number or a date is written with (``42``, ``1.5e3``, ``0x1F``, ``inf``, ``1979-05-27``).
_SCALAR = frozenset("0123456789+-._:abcdefABCDEFinotxZT")
# Control characters TOML refuses in a string (a tab is allowed).
_CONTROL = frozenset(chr(c) for c in (*range(0x09), *range(0x0A, 0x20), 0x7F))


def strings(text: str, table: str = "") -> dict[str, str] | None:
    """The plain string values of ``table`` ("" for the top level); None: ask ``tomllib``."""
    found = values(text, table)
    if found is None or not all(isinstance(value, str) for value in found.values()):
        return None
    return {key: str(value) for key, value in found.items()}


def values(text: str, table: str = "") -> dict[str, str | bool | list[str]] | None:
    """The plain values of ``table``: strings, booleans, string arrays; None: ask ``tomllib``."""
    if '"""' in text or "'''" in text:
        return None
    found: dict[str, str | bool | list[str]] = {}
    seen: set[tuple[str, str | None]] = set()  # (table, key) of the other tables' lines
    current = ""
    lines = iter(text.splitlines())
    for raw in lines:
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            header = _header(line)
            if header is None or (table and header.startswith(table + ".")):
                return None  # an array table, a quoted name, a multi-line array's line, a sub-table
            current = header
            continue
        key, value = _pair(line, lines)
        if current == table:
            if key is None or value is None or key in found:
                return None
            found[key] = value
        elif (current, key) in seen or not _harmless(key, value, line, current, table):
            return None  # a key set twice is not TOML: tomllib says so
        else:
            seen.add((current, key))
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


def _pair(line: str, more: Iterator[str]) -> tuple[str | None, str | bool | list[str] | None]:
    """``(key, value)`` of ``key = value``; None for what is not plainly that.

    An array left open takes the following lines (from ``more``) until it closes.
    """
    key, eq, rest = line.partition("=")
    key = key.strip()
    if not eq or not _bare(key):
        return None, None
    value = rest.strip()
    if value.startswith("["):
        return key, _array(value, more)
    if value.partition("#")[0].strip() in ("true", "false"):
        return key, value.startswith("true")
    text, end = _string(value)
    if text is None or not _ends_cleanly(value[end:]):
        return key, None
    return key, text


def _string(value: str) -> tuple[str | None, int]:
    """The plain string ``value`` starts with, and where it ends; None when not plain."""
    quote = value[:1]
    if quote not in ('"', "'"):
        return None, 0
    end = value.find(quote, 1)
    inner = value[1:end]
    if end < 0 or any(ch in _CONTROL for ch in inner):
        return None, 0
    if quote == '"' and "\\" in inner:
        return None, 0  # an escape: tomllib decodes it
    return inner, end + 1


def _array(value: str, more: Iterator[str]) -> list[str] | None:
    """``["a", 'b',]``: plain strings only, comments allowed between lines."""
    items: list[str] = []
    rest = value[1:]
    expect_item = True
    while True:
        rest = rest.strip()
        if not rest or rest.startswith("#"):
            following = next(more, None)
            if following is None:
                return None
            rest = following
            continue
        if rest.startswith("]"):
            return items if _ends_cleanly(rest[1:]) else None
        if rest.startswith(","):
            if expect_item:
                return None
            expect_item, rest = True, rest[1:]
            continue
        text, end = _string(rest)
        if text is None or not expect_item:
            return None
        items.append(text)
        expect_item, rest = False, rest[end:]


def _harmless(key: str | None, parsed: object, line: str, current: str, table: str) -> bool:
    """A line outside ``table`` that cannot set a key of it or hide a table header."""
    if key is None:
        return False  # a dotted or quoted key, or the inside of a multi-line array
    if current == "" and key == table.partition(".")[0]:
        return False  # ``server = {url = …}`` at the top level
    if parsed is not None:
        return True
    value = line.partition("=")[2].strip()
    if value.startswith("["):
        return value.endswith("]")
    plain = value.partition("#")[0].strip()  # a number or a date, not a string with junk after
    return bool(plain) and all(ch in _SCALAR for ch in plain)
