"""YAML frontmatter: parsed leniently from disk, strictly from callers, written back stably.

Parsing is bounded (see :mod:`ai_memory.wiki.bounded_yaml` and
:mod:`ai_memory.wiki.limits`): no block, however hostile, costs more than a
small fixed amount of time and memory, and none makes parsing raise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

from ai_memory.wiki import bounded_yaml, yaml_dump
from ai_memory.wiki.limits import MAX_FRONTMATTER_BYTES, within_limits

# Known keys are written first, in this order; unknown keys follow in their own order.
KNOWN_KEYS = (
    "title",
    "kind",
    "tier",
    "tags",
    "entities",
    "pinned",
    "expires_at",
    "abstract",
    "summary",
    "session_id",
    "agent",
    "created",
    "updated",
    "source_files",
)


@dataclass(frozen=True, slots=True)
class ParsedMarkdown:
    frontmatter: dict[str, Any]
    body: str
    has_frontmatter: bool
    error: str | None = None
    raw_frontmatter: str = field(default="")


def parse_markdown(text: str) -> ParsedMarkdown:
    """Split ``text`` into frontmatter and body; never raises.

    A frontmatter block that does not parse (or is not a mapping) leaves the
    whole text as the body, with ``error`` saying what is wrong, so a page that
    someone broke by hand is still stored and searchable.
    """
    block = _split(text)
    if block is None:
        return ParsedMarkdown({}, text, has_frontmatter=False)
    raw, body = block
    size = _size(raw)
    if size > MAX_FRONTMATTER_BYTES:
        error = f"frontmatter is {size} bytes; the limit is {MAX_FRONTMATTER_BYTES}"
        return ParsedMarkdown({}, text, True, error, raw)
    try:
        data = bounded_yaml.load(raw) if raw.strip() else {}
    except bounded_yaml.FrontmatterRefused as exc:
        return ParsedMarkdown({}, text, True, _short(exc), raw)
    except yaml.YAMLError as exc:
        return ParsedMarkdown({}, text, True, f"frontmatter is not valid YAML: {_short(exc)}", raw)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        kind = type(data).__name__
        return ParsedMarkdown({}, text, True, f"frontmatter is a {kind}, not a mapping", raw)
    return ParsedMarkdown({str(k): _jsonable(v) for k, v in data.items()}, body, True, None, raw)


def parse_file(text: str) -> ParsedMarkdown:
    """Like :func:`parse_markdown`, for a file on disk: fields over a cap are left out
    (and named in ``error``) instead of refusing the page."""
    parsed = parse_markdown(text)
    if parsed.error:
        return parsed
    kept, error = within_limits(parsed.frontmatter)
    if error is None:
        return parsed
    return ParsedMarkdown(kept, parsed.body, True, error, parsed.raw_frontmatter)


def render_markdown(frontmatter: dict[str, Any], body: str) -> str:
    if not frontmatter:
        return body
    ordered = {k: frontmatter[k] for k in KNOWN_KEYS if k in frontmatter}
    ordered.update({k: v for k, v in frontmatter.items() if k not in ordered})
    dumped = yaml_dump.dump(ordered)
    return f"---\n{dumped}---\n\n{body.lstrip(chr(10))}"


def block_bytes(text: str) -> int:
    """Size of the frontmatter block a reader of ``text`` sees (0 without one)."""
    block = _split(text)
    return 0 if block is None else _size(block[0])


def _size(raw: str) -> int:
    return len(raw.encode("utf-8", "surrogatepass"))


def _split(text: str) -> tuple[str, str] | None:
    if not (text.startswith("---\n") or text.startswith("---\r\n")):
        return None
    lines = text.splitlines(keepends=True)
    for index in range(1, len(lines)):
        if lines[index].rstrip("\r\n") in ("---", "..."):
            raw = "".join(lines[1:index])
            body = "".join(lines[index + 1 :])
            return raw, body.lstrip("\r\n")
    return None


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [_jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _short(exc: yaml.YAMLError) -> str:
    return " ".join(str(exc).split())[:300]
