"""The live-process check: whoever owns a data dir holds an exclusive lock on it.

The server holds it while serving; direct-disk operations (reindex, restore,
embed backfill) hold it while they run, so neither can start under the other.
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

from ai_memory.core.errors import NotInitialised, ServerRunning

LOCK_NAME = "server.lock"


class ServerLock:
    """``operation`` names a direct-disk operation; None means the server itself."""

    def __init__(self, data_dir: Path, operation: str | None = None) -> None:
        self.path = data_dir / LOCK_NAME
        self.operation = operation
        self._fd: int | None = None

    def acquire(self, **info: Any) -> None:
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except FileNotFoundError:  # no data dir: a laptop signed in to a server has none
            what = f"`ai-memory {self.operation}`" if self.operation else "the server"
            raise NotInitialised(
                f"no data dir at {self.path.parent}: {what} works on a data dir made by "
                "`ai-memory init` (or pass --data-dir); a signed-in machine's memory is on "
                "its server's machine"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise ServerRunning(self._refusal()) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "operation": self.operation, **info}).encode())
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

    def _refusal(self) -> str:
        holder = _holder(self.path)
        if self.operation:
            return f"refusing to {self.operation}: {holder} owns {self.path.parent}; stop it first"
        return f"{holder} already owns {self.path.parent}"


def _holder(path: Path) -> str:
    info: dict[str, Any] = {}
    with contextlib.suppress(OSError, ValueError):
        info = json.loads(path.read_text() or "{}")
    pid = info.get("pid", "?")
    operation = info.get("operation")
    return f"`ai-memory {operation}` (pid {pid})" if operation else f"a server (pid {pid})"
