"""Page path validation: the only way a caller-supplied path reaches the disk."""

from __future__ import annotations

from ai_memory.core.errors import InvalidPath

MAX_PATH_CHARS = 240
MAX_SEGMENT_CHARS = 120
_FORBIDDEN_CHARS = frozenset('\\:*?"<>|')


def validate_page_path(path: str) -> str:
    """Return ``path`` normalised, or raise :class:`InvalidPath` saying what is wrong.

    A page path is relative to its project, ends in ``.md``, never climbs out
    (``..``), never names a hidden segment (``.git``, ``.obsidian``) and stays
    short enough for every filesystem we meet.
    """
    if not isinstance(path, str) or not path.strip():
        raise InvalidPath("page path is empty")
    if any(ord(c) < 32 or c == "\x7f" for c in path):
        raise InvalidPath(f"page path {path!r} contains control characters")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise InvalidPath(f"page path {path!r} is absolute; give it relative to the project")
    bad = sorted(set(path) & _FORBIDDEN_CHARS)
    if bad:
        raise InvalidPath(f"page path {path!r} contains forbidden characters {''.join(bad)!r}")
    if len(path) > MAX_PATH_CHARS:
        raise InvalidPath(
            f"page path is {len(path)} characters long; the limit is {MAX_PATH_CHARS}"
        )
    segments = path.split("/")
    for segment in segments:
        if segment == "":
            raise InvalidPath(f"page path {path!r} has an empty segment")
        if segment == "..":
            raise InvalidPath(f"page path {path!r} climbs out of the project with '..'")
        if segment.startswith("."):
            raise InvalidPath(f"page path {path!r} has a hidden segment {segment!r}")
        if segment != segment.strip():
            raise InvalidPath(f"page path {path!r} has a segment with surrounding spaces")
        if len(segment) > MAX_SEGMENT_CHARS:
            raise InvalidPath(f"page path segment {segment[:20]!r}... is too long")
    if not path.endswith(".md") or len(segments[-1]) <= 3:
        raise InvalidPath(f"page path {path!r} must name a markdown file ending in '.md'")
    return path
