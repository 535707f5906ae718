"""The live-process check: a server holds an exclusive lock on its data dir.

``flock`` locks vanish with their process, so a server killed with SIGKILL
never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from ai_memory.core.errors import ServerRunning

LOCK_NAME = "server.lock"


class ServerLock:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_NAME
        self._fd: int | None = None

    def acquire(self, **info: Any) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ServerRunning(_running_message(self.path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), **info}).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> ServerLock:
        self.acquire()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.release()


def server_info(data_dir: Path) -> dict[str, Any] | None:
    """What the running server wrote about itself, or None when no server holds the lock."""
    path = data_dir / LOCK_NAME
    if not path.exists():
        return None
    fd = os.open(path, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            with contextlib.suppress(ValueError):
                data: dict[str, Any] = json.loads(path.read_text() or "{}")
                return data
            return {}
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def require_no_server(data_dir: Path, operation: str) -> None:
    info = server_info(data_dir)
    if info is not None:
        pid = info.get("pid", "?")
        raise ServerRunning(
            f"refusing to {operation}: a server (pid {pid}) owns {data_dir}; stop it first"
        )


def _running_message(path: Path) -> str:
    with contextlib.suppress(Exception):
        pid = json.loads(path.read_text() or "{}").get("pid", "?")
        return f"another server (pid {pid}) already owns {path.parent}"
    return f"another server already owns {path.parent}"
