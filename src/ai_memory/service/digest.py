"""The digest line of a rendered service file: proof that a file is ours and unchanged.

The line holds the SHA-256 of every other line, so ``uninstall`` can tell a file it
wrote (remove it) from one edited by hand or written by someone else (leave it alone).
"""

from __future__ import annotations

import hashlib
import re
from enum import StrEnum

_DIGEST = re.compile(r"ai-memory-digest: sha256=([0-9a-f]*)")


class FileState(StrEnum):
    INTACT = "intact"  # written by ai-memory, unchanged since
    EDITED = "edited"  # has our digest line, but other lines changed
    FOREIGN = "foreign"  # no digest line: not written by ai-memory


def _split(text: str) -> tuple[list[str], int | None]:
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if _DIGEST.search(line):
            return lines, index
    return lines, None


def _hash(lines: list[str], skip: int) -> str:
    body = "".join(line for index, line in enumerate(lines) if index != skip)
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def seal(text: str) -> str:
    """Fill the digest line of ``text`` (which must have one) with the digest of the rest."""
    lines, index = _split(text)
    if index is None:
        raise ValueError("the template has no ai-memory-digest line")
    digest = _hash(lines, index)
    lines[index] = _DIGEST.sub(f"ai-memory-digest: sha256={digest}", lines[index], count=1)
    return "".join(lines)


def check(text: str) -> FileState:
    lines, index = _split(text)
    if index is None:
        return FileState.FOREIGN
    match = _DIGEST.search(lines[index])
    assert match is not None
    return FileState.INTACT if match.group(1) == _hash(lines, index) else FileState.EDITED
