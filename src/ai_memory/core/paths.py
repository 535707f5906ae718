"""Page path validation: the only way a caller-supplied path reaches the disk."""

from __future__ import annotations

import re
import unicodedata

from ai_memory.core.errors import InvalidPath
from ai_memory.core.textcheck import text_problem

# The atomic writer stages ``<TEMP_PREFIX><name>.<TEMP_TOKEN_HEX hex digits>`` beside the
# file, so a name must leave room for those bytes inside the filesystem's 255-byte limit.
TEMP_PREFIX = ".tmp-"
TEMP_TOKEN_HEX = 8
MAX_NAME_BYTES = 255
MAX_SEGMENT_BYTES = MAX_NAME_BYTES - len(TEMP_PREFIX) - 1 - TEMP_TOKEN_HEX
# The whole page path, so workspace/project/path under the data dir stays far below
# PATH_MAX everywhere (1024 bytes on macOS).
MAX_PATH_BYTES = 512
_FORBIDDEN_CHARS = frozenset('\\:*?"<>|')
_CONTROL_CHAR = re.compile("[\x00-\x1f\x7f]")


def validate_page_path(path: str) -> str:
    """Return ``path`` normalised, or raise :class:`InvalidPath` saying what is wrong.

    A page path is relative to its project, ends in ``.md``, never climbs out
    (``..``), never names a hidden segment (``.git``, ``.obsidian``) and stays
    short enough, in UTF-8 bytes, for every filesystem we meet.
    """
    if not isinstance(path, str) or not path.strip():
        raise InvalidPath("page path is empty")
    if _CONTROL_CHAR.search(path):
        raise InvalidPath(f"page path {_shown(path)} contains control characters")
    problem = text_problem(path)
    if problem:
        raise InvalidPath(f"page path {_shown(path)} {problem}")
    if path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise InvalidPath(f"page path {_shown(path)} is absolute; give it relative to the project")
    bad = sorted(set(path) & _FORBIDDEN_CHARS)
    if bad:
        raise InvalidPath(
            f"page path {_shown(path)} contains forbidden characters {''.join(bad)!r}"
        )
    size = len(path.encode("utf-8"))
    if size > MAX_PATH_BYTES:
        raise InvalidPath(f"page path is {size} bytes long in UTF-8; the limit is {MAX_PATH_BYTES}")
    segments = path.split("/")
    for segment in segments:
        _check_segment(path, segment)
    if not path.endswith(".md") or len(segments[-1]) <= 3:
        raise InvalidPath(f"page path {_shown(path)} must name a markdown file ending in '.md'")
    return path


def _shown(path: str) -> str:
    """The path for an error: repr escapes what cannot be printed, surrogates included."""
    return repr(path)[:300]


def _check_segment(path: str, segment: str) -> None:
    if segment == "":
        raise InvalidPath(f"page path {path!r} has an empty segment")
    if segment == "..":
        raise InvalidPath(f"page path {path!r} climbs out of the project with '..'")
    # NFKC folds look-alike dots (U+FF0E, U+2024) that some tools treat as '.'.
    if segment.startswith(".") or (
        not segment.isascii() and unicodedata.normalize("NFKC", segment).startswith(".")
    ):
        raise InvalidPath(f"page path {path!r} has a hidden segment {segment!r}")
    if segment != segment.strip():
        raise InvalidPath(f"page path {path!r} has a segment with surrounding spaces")
    size = len(segment.encode("utf-8"))
    if size > MAX_SEGMENT_BYTES:
        raise InvalidPath(
            f"page path segment {segment[:20]!r}... is {size} bytes long in UTF-8; "
            f"the limit is {MAX_SEGMENT_BYTES}"
        )
