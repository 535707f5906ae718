"""Rewriting a user's own config file (agent settings, MCP config) without harming it.

These files often hold API keys, so the new content never becomes readable by
anyone the old file was not readable by; a symlinked dotfile keeps its link and
the file it points to is edited; the previous content is kept in a backup that
no later run can overwrite; the replacement is durable before it is visible.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

from ai_memory.store.files import fsync_dir

DEFAULT_MODE = 0o600
MAX_BACKUPS_PER_SECOND = 1000


def write_config(path: Path, text: str) -> Path | None:
    """Replace ``path`` with ``text`` (symlinks followed); return the backup of the old file."""
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o7777
        existed = True
    except FileNotFoundError:
        mode, existed = DEFAULT_MODE, False
    backup = _backup(target, mode) if existed else None
    _replace(target, text.encode("utf-8"), mode)
    return backup


def _backup(target: Path, mode: int) -> Path:
    """A copy of ``target`` under a name no earlier backup holds (created exclusively)."""
    data = target.read_bytes()
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for counter in range(MAX_BACKUPS_PER_SECOND):
        suffix = f".bak-{stamp}" + (f"-{counter}" if counter else "")
        candidate = target.with_name(target.name + suffix)
        try:
            fd = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
        except FileExistsError:
            continue
        _write_all(fd, data)
        return candidate
    raise FileExistsError(f"too many backups of {target} this second")


def _replace(target: Path, data: bytes, mode: int) -> None:
    temp = target.with_name(f".{target.name}.tmp-{os.getpid()}-{os.urandom(4).hex()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # the umask must not widen or narrow the original mode
        _write_all(fd, data)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    fsync_dir(target.parent)


def _write_all(fd: int, data: bytes) -> None:
    """Write, fsync and close ``fd``."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    finally:
        os.close(fd)
