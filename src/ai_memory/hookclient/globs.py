"""File-path globs for ``[capture] exclude``, matched without ``re`` or ``fnmatch``.

The hook client runs on every agent event, and compiling a regular expression
costs it more than matching a handful of short paths by hand. The syntax is
gitignore's, reduced to what a capture policy needs:

* ``*`` matches within one path segment, ``?`` one character, ``[abc]``,
  ``[a-z]`` and ``[!abc]`` one character of (or not of) a set;
* ``**`` as a whole segment matches any number of segments (none included);
* a pattern without a ``/`` (``*.env``) matches a file or folder name at any depth
  (outside the base folder, only a file's own name);
* a pattern with a ``/`` (``secrets/**``, ``config/prod.toml``) is relative to
  the folder of the file that sets it (the checkout's marker), or the checkout's
  root for the user-level file; one starting ``/`` or ``~/`` is an absolute path;
* a pattern that matches a folder matches everything under it.
"""

from __future__ import annotations

MAX_PATTERN = 1024


class GlobError(ValueError):
    """A pattern that cannot be matched: the message says what is wrong with it."""


class Glob:
    """One compiled pattern; a plain class (``dataclasses`` is slow to import)."""

    __slots__ = ("absolute", "anywhere", "segments", "text")

    def __init__(self, text: str, segments: tuple[str, ...], absolute: bool, anywhere: bool):
        self.text = text
        self.segments = segments
        self.absolute = absolute
        self.anywhere = anywhere

    def matches(self, relative: str | None, absolute: str) -> bool:
        """Whether the path (relative to the pattern's base, None when outside it) matches."""
        if self.absolute:
            return _prefix_match(self.segments, _split(absolute))
        if self.anywhere:
            # Inside the base any folder's name counts; outside it only the file's own.
            parts = _split(relative) if relative is not None else _split(absolute)[-1:]
            return any(_name(self.segments[0], part) for part in parts)
        return relative is not None and _prefix_match(self.segments, _split(relative))


def compile_glob(pattern: object, home: str) -> Glob:
    """The pattern checked and split; raise :class:`GlobError` naming what is wrong."""
    if not isinstance(pattern, str):
        raise GlobError(f"an exclude pattern must be a string, not {type(pattern).__name__}")
    text = pattern.strip()
    if not text:
        raise GlobError("an exclude pattern is empty")
    if len(text) > MAX_PATTERN or "\x00" in text:
        raise GlobError(f"exclude pattern {text[:60]!r} is too long or holds a NUL")
    absolute = text.startswith(("/", "~/"))
    text_path = home.rstrip("/") + text[1:] if text.startswith("~/") else text
    segments = tuple(part for part in text_path.strip("/").split("/") if part not in ("", "."))
    if not segments:
        raise GlobError(f"exclude pattern {text!r} names no path")
    if ".." in segments:
        raise GlobError(f"exclude pattern {text!r} holds a '..' segment")
    for segment in segments:
        if segment != "**" and not _classes_close(segment):
            raise GlobError(f"exclude pattern {text!r} has a '[' that is never closed")
    anywhere = not absolute and len(segments) == 1 and "/" not in text.rstrip("/")
    return Glob(text, segments, absolute, anywhere and segments[0] != "**")


def _split(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def _prefix_match(pattern: tuple[str, ...], parts: list[str]) -> bool:
    """The pattern matches the path or one of the folders it lies in."""
    return any(_segments(pattern, 0, parts[:end], 0) for end in range(1, len(parts) + 1))


def _segments(pattern: tuple[str, ...], p: int, parts: list[str], i: int) -> bool:
    while p < len(pattern):
        if pattern[p] == "**":
            return any(_segments(pattern, p + 1, parts, j) for j in range(i, len(parts) + 1))
        if i >= len(parts) or not _name(pattern[p], parts[i]):
            return False
        p, i = p + 1, i + 1
    return i == len(parts)


def _name(pattern: str, name: str) -> bool:
    """One segment against one name: ``*``, ``?`` and ``[…]``, backtracking on ``*``."""
    if "?" not in pattern and "[" not in pattern and pattern.count("*") < 2:
        # ``secrets``, ``*.env``, ``id_*``: string methods, for a long command's many words.
        head, star, tail = pattern.partition("*")
        if not star:
            return pattern == name
        return len(name) >= len(pattern) - 1 and name.startswith(head) and name.endswith(tail)
    p = n = 0
    star_p, star_n = -1, 0
    while n < len(name):
        if p < len(pattern) and pattern[p] == "*":
            star_p, star_n = p, n
            p += 1
            continue
        if p < len(pattern):
            step = _one(pattern, p, name[n])
            if step:
                p, n = p + step, n + 1
                continue
        if star_p < 0:
            return False
        p, star_n = star_p + 1, star_n + 1
        n = star_n
    return all(ch == "*" for ch in pattern[p:])


def _one(pattern: str, p: int, ch: str) -> int:
    """How much of ``pattern`` at ``p`` matched ``ch`` (0: no match)."""
    head = pattern[p]
    if head == "?":
        return 1
    if head != "[":
        return 1 if head == ch else 0
    end = _class_end(pattern, p)
    body = pattern[p + 1 : end]
    negated = body[:1] in ("!", "^")
    if negated:
        body = body[1:]
    found = False
    k = 0
    while k < len(body):
        if k + 2 < len(body) and body[k + 1] == "-":
            found = found or body[k] <= ch <= body[k + 2]
            k += 3
        else:
            found = found or body[k] == ch
            k += 1
    return end - p + 1 if found != negated else 0


def _class_end(pattern: str, p: int) -> int:
    """The index of the ``]`` closing the class opened at ``p`` (-1: never closed)."""
    k = p + 1
    if k < len(pattern) and pattern[k] in ("!", "^"):
        k += 1
    if k < len(pattern) and pattern[k] == "]":
        k += 1  # ``[]a]``: a leading ``]`` is part of the set
    found = pattern.find("]", k)
    return found


def _classes_close(segment: str) -> bool:
    k = segment.find("[")
    while k >= 0:
        end = _class_end(segment, k)
        if end < 0:
            return False
        k = segment.find("[", end + 1)
    return True
