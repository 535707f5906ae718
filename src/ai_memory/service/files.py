"""Writing and removing the service file, touching only a file ai-memory wrote."""

from __future__ import annotations

import contextlib
import os
from enum import StrEnum
from pathlib import Path

from ai_memory.core.errors import ServiceFileEdited
from ai_memory.service.digest import FileState, check
from ai_memory.store.files import atomic_write


class Written(StrEnum):
    CREATED = "created"
    REPLACED = "replaced"  # ours, written for another install or data dir
    UNCHANGED = "unchanged"


def read_unit(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def write_unit(path: Path, text: str, *, force: bool = False) -> Written:
    """Write ``text`` unless it is already there; refuse to overwrite a file edited by hand."""
    current = read_unit(path)
    if current == text:
        return Written.UNCHANGED
    if current is not None and check(current) is not FileState.INTACT and not force:
        raise ServiceFileEdited(_edited(path, current) + "; pass --force to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text.encode("utf-8"))
    return Written.CREATED if current is None else Written.REPLACED


def require_removable(path: Path) -> bool:
    """True when there is a file of ours to remove; raise if the file there is not ours."""
    current = read_unit(path)
    if current is None:
        return False
    if check(current) is not FileState.INTACT:
        raise ServiceFileEdited(_edited(path, current) + f"; remove it yourself: rm {path}")
    return True


def remove_unit(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)


def _edited(path: Path, text: str) -> str:
    if check(text) is FileState.FOREIGN:
        return f"{path} was not written by ai-memory, so it is left alone"
    return f"{path} was changed since ai-memory wrote it, so it is left alone"
