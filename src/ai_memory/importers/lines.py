"""Shared reading helpers: JSON lines that may be cut off, times in the agents' formats."""

from __future__ import annotations

import errno
import json
import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from ai_memory.core.clock import iso, parse_iso

MAX_LINE_BYTES = 8 * 1024 * 1024  # a line larger than this is skipped, never parsed


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened for reading, if it is a regular file (through any symlink).

    A FIFO would block the import forever and a device (``/dev/zero``) never ends:
    ``OSError`` "not a regular file" instead, without waiting on either.
    """
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path) -> bytes:
    with open_regular(path) as handle:
        return handle.read()


def json_lines(path: Path, counter: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each line of ``path`` that is a JSON object, with its 1-based number.

    A truncated, corrupt or oversized line is skipped (never held in memory whole)
    and counted in ``counter[0]``: one bad line never costs the rest of the session.
    ``OSError`` propagates.
    """
    with open_regular(path) as handle:
        for number, raw in enumerate(_bounded_lines(handle), 1):
            if raw is None:
                counter[0] += 1
                continue
            if not raw.strip():
                continue
            try:
                value = json.loads(raw)
            except (ValueError, RecursionError):
                counter[0] += 1
                continue
            if isinstance(value, dict):
                yield number, value
            else:
                counter[0] += 1


def _bounded_lines(handle: BinaryIO) -> Iterator[bytes | None]:
    """Each line of ``handle``; None for one longer than :data:`MAX_LINE_BYTES`."""
    while raw := handle.readline(MAX_LINE_BYTES + 1):
        if len(raw) <= MAX_LINE_BYTES:
            yield raw
            continue
        while not raw.endswith(b"\n") and (raw := handle.readline(MAX_LINE_BYTES)):
            pass  # the rest of the line, a piece at a time
        yield None


def iso_time(value: object) -> str | None:
    """An agent's time (ISO text, or epoch seconds or milliseconds) in the store's format."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 10_000_000_000 else value
        try:
            return iso(datetime.fromtimestamp(seconds, UTC))
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        return parse_iso(value)
    return None


def listed(value: object) -> list[Any]:
    """``value`` if it is a list, else nothing: a field of the wrong type is ignored."""
    return value if isinstance(value, list) else []


def inner(value: object, *keys: str) -> object:
    """``value[k1][k2]…`` through dicts only; None as soon as a step is not a dict."""
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def text_of(content: object) -> str:
    """The text of a message's content: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [text_of(item) for item in content]
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        for key in ("text", "content"):
            value = content.get(key)
            if isinstance(value, str):
                return value
    return ""
