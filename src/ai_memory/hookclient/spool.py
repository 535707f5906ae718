"""The local spool: every event is written here first and removed once the server has it.

Standard library only. What is written here was already cut and redacted by the hook
client (:mod:`ai_memory.hookclient.redact`). File names sort by creation time, so
retries go oldest first; an event keeps its ``ingest_key`` for life, so a retry can
never duplicate it.
"""

from __future__ import annotations

import time

from ai_memory.hookclient import fs
from ai_memory.hookclient.fastjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from typing import Any, TypeAlias

    # Folders are plain strings here (``pathlib`` is slow to import); ``Path`` works too.
    Folder: TypeAlias = "str | os.PathLike[str]"

SUFFIX = ".json"
REJECTED = "rejected"
# Refused events are kept briefly for inspection only (redacted, as every spooled event).
REJECTED_KEEP_S = 7 * 86400
REJECTED_KEEP_FILES = 100
_HEX = "0123456789abcdef"


def new_ingest_key() -> str:
    """Sortable and unique: nanoseconds since the epoch, then random bits."""
    return f"{time.time_ns():016x}-{fs.urandom(5).hex()}"


def captured_ns(key: str) -> int | None:
    """When the event of ``key`` was captured (nanoseconds since the epoch), read back from
    a key :func:`new_ingest_key` made; None for a key of any other shape."""
    stamp, dash, _ = key.partition("-")
    if not dash or len(stamp) != 16 or stamp.strip(_HEX):
        return None
    return int(stamp, 16)


def write(spool: Folder, key: str, entry: dict[str, Any]) -> str:
    """Write atomically (temp file, rename), so a half-written event is never retried."""
    fs.makedirs(spool, mode=0o700, exist_ok=True)
    target = fs.join(spool, f"{key}{SUFFIX}")
    temp = fs.join(spool, f".tmp-{key}")
    # 0600 from the first byte, whatever the agent's umask: the spool is captured text.
    fd = fs.open_fd(temp, fs.O_WRONLY | fs.O_CREAT | fs.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write(dumps(entry))
    fs.replace(temp, target)
    return target


def remove(spool: Folder, key: str) -> None:
    try:
        fs.unlink(fs.join(spool, f"{key}{SUFFIX}"))
    except FileNotFoundError:
        return


def reject(spool: Folder, key: str, now: float | None = None) -> None:
    """Set aside an event the server refused as invalid: kept for inspection, never retried."""
    folder = fs.join(spool, REJECTED)
    fs.makedirs(folder, mode=0o700, exist_ok=True)
    try:  # noqa: SIM105 (``contextlib`` is slow to import)
        fs.replace(fs.join(spool, f"{key}{SUFFIX}"), fs.join(folder, f"{key}{SUFFIX}"))
    except FileNotFoundError:
        pass
    prune_rejected(spool, time.time() if now is None else now)


def prune_rejected(spool: Folder, now: float) -> int:
    """Delete set-aside events older than a week, and all but the newest 100; return how many."""
    folder = fs.join(spool, REJECTED)
    try:
        names = sorted(fs.listdir(folder), reverse=True)  # newest first: keys sort by time
    except FileNotFoundError:
        return 0
    removed = 0
    for index, name in enumerate(names):
        path = fs.join(folder, name)
        try:
            old = now - fs.stat(path).st_mtime > REJECTED_KEEP_S
            if old or index >= REJECTED_KEEP_FILES:
                fs.unlink(path)
                removed += 1
        except FileNotFoundError:
            continue
    return removed


def exists(spool: Folder, key: str) -> bool:
    return fs.exists(fs.join(spool, f"{key}{SUFFIX}"))


def pending(
    spool: Folder, limit: int | None = None, skip: frozenset[str] = frozenset()
) -> list[str]:
    """Keys waiting in the spool, oldest first."""
    try:
        names = sorted(n for n in fs.listdir(spool) if n.endswith(SUFFIX) and n[0] != ".")
    except FileNotFoundError:
        return []
    keys = [n[: -len(SUFFIX)] for n in names]
    keys = [k for k in keys if k not in skip]
    return keys if limit is None else keys[:limit]


def read(spool: Folder, key: str) -> dict[str, Any] | None:
    """The stored entry, or None when another process already delivered it or it is damaged."""
    return read_sized(spool, key)[0]


def read_sized(spool: Folder, key: str) -> tuple[dict[str, Any] | None, int]:
    """The stored entry (or None, as :func:`read`) and its size in bytes."""
    try:
        with open(fs.join(spool, f"{key}{SUFFIX}"), "rb") as handle:
            raw = handle.read()
        entry = loads(raw)
    except FileNotFoundError:
        return None, 0
    except (OSError, ValueError):
        reject(spool, key)
        return None, 0
    return (entry, len(raw)) if isinstance(entry, dict) else (None, 0)
