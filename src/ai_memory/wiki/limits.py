"""Size caps on frontmatter fields, and the text rules every frontmatter string follows.

A caller's write that breaks one is refused, naming the field. A file on disk
(a hand edit, a ``git pull``) that breaks one is still indexed, without the
offending fields, and the reason is kept as the page's frontmatter error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from ai_memory.core.errors import InvalidFrontmatter, InvalidInput, TooLarge

MAX_FRONTMATTER_BYTES = 64 * 1024  # the YAML block of a page, before it is parsed
TEXT_CHARS = {
    "title": 200,
    "summary": 4000,
    "abstract": 4000,
    "kind": 64,
    "tier": 64,
    "session_id": 200,
    "agent": 200,
    "expires_at": 64,
    "created": 64,
    "updated": 64,
}
# Field: (most items, most characters in one item).
LIST_CAPS = {"tags": (50, 100), "entities": (100, 200), "source_files": (100, 500)}
MAX_UNKNOWN_KEYS = 50
MAX_KEY_CHARS = 100
MAX_UNKNOWN_VALUE_BYTES = 16 * 1024  # one unknown key's value, as JSON


def check_body(body: str, max_bytes: int) -> None:
    """A caller's page text: a string of valid UTF-8 text, no NUL, within the page limit."""
    if not isinstance(body, str):
        raise InvalidInput("page body must be text")
    try:
        size = len(body.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidInput(f"page body is not valid UTF-8 text: {exc.reason}") from exc
    if size > max_bytes:
        raise TooLarge(f"page body is {size} bytes; the limit is {max_bytes}")
    if "\x00" in body:
        raise InvalidInput("page body contains NUL characters")


def check_written(path: str, text: str, block_bytes: int, max_bytes: int) -> None:
    """The file as it will be written stays within the page limit, and its frontmatter
    block within the block limit, so reading the file back gives the same page."""
    size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise TooLarge(
            f"page {path} would be {size} bytes with its frontmatter; the limit is {max_bytes}"
        )
    if block_bytes > MAX_FRONTMATTER_BYTES:
        raise TooLarge(
            f"page {path} would have a frontmatter block of {block_bytes} bytes; "
            f"the limit is {MAX_FRONTMATTER_BYTES}"
        )


def problems(frontmatter: dict[str, Any]) -> dict[str, str]:
    """Each field that breaks a cap or a text rule, with what is wrong with it."""
    found: dict[str, str] = {}
    unknown = 0
    for key, value in frontmatter.items():
        known = key in TEXT_CHARS or key in LIST_CAPS or key == "pinned"
        unknown += not known
        problem = _bad_text(key) or _bad_text(value) or _over_cap(key, value)
        if problem is None and not known and unknown > MAX_UNKNOWN_KEYS:
            problem = f"is one key too many: at most {MAX_UNKNOWN_KEYS} unknown keys"
        if problem is None and len(key) > MAX_KEY_CHARS:
            problem = f"is a key of {len(key)} characters; the limit is {MAX_KEY_CHARS}"
        if problem is not None:
            found[key] = problem
    return found


def check_frontmatter(frontmatter: dict[str, Any], where: str) -> None:
    """Refuse a caller's frontmatter block that breaks a cap (``where`` names the page)."""
    for key, problem in list(problems(frontmatter).items())[:1]:
        raise InvalidFrontmatter(f"{where}: frontmatter field {_name(key)} {problem}", field=key)


def check_fields(fields: dict[str, Any]) -> None:
    """Refuse page fields given beside the body (title, tags, …) that break a cap."""
    for key, problem in list(problems(fields).items())[:1]:
        raise InvalidInput(f"field {_name(key)} {problem}", field=key)


def within_limits(frontmatter: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """A file's frontmatter without the fields that break a cap, and why they were left out."""
    found = problems(frontmatter)
    if not found:
        return frontmatter, None
    kept = {k: v for k, v in frontmatter.items() if k not in found}
    reasons = "; ".join(f"{_name(k)} {p}" for k, p in found.items())
    return kept, f"frontmatter field(s) left out: {reasons}"[:2000]


def _over_cap(key: str, value: Any) -> str | None:
    if key in TEXT_CHARS:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return _too_long(len(text), TEXT_CHARS[key], "characters long")
    if key in LIST_CAPS:
        return _list_over_cap(value, *LIST_CAPS[key])
    if key == "pinned":
        return None
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    return _too_long(size, MAX_UNKNOWN_VALUE_BYTES, "bytes long as JSON")


def _list_over_cap(value: Any, most_items: int, most_chars: int) -> str | None:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list):
        items = [items]
    if len(items) > most_items:
        return f"has {len(items)} items; the limit is {most_items}"
    for item in items:
        text = item if isinstance(item, str) else json.dumps(item, ensure_ascii=False)
        if len(text) > most_chars:
            return f"has an item of {len(text)} characters; the limit is {most_chars}"
    return None


def _too_long(size: int, limit: int, unit: str) -> str | None:
    return f"is {size} {unit}; the limit is {limit}" if size > limit else None


def _bad_text(value: Any) -> str | None:
    for text in _strings(value):
        if "\x00" in text:
            return "contains a NUL character"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains a lone surrogate (text that is not valid Unicode)"
    return None


def _strings(value: Any) -> Iterator[str]:
    """Every string in a value: keys and items of nested mappings and lists too."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def _name(key: str) -> str:
    """A field name fit to quote in a message: short, and with no control characters."""
    shown = key if len(key) <= 60 else key[:57] + "…"
    return repr(shown.encode("utf-8", "backslashreplace").decode("utf-8"))
