"""Crash-safe file replacement: temp file, fsync, rename, fsync the directory.

``FileStage`` does the same for every file a writer batch touches at once: each
temp file is created when it is staged, and written and fsynced on a pool thread
from then on, so its disk wait overlaps the rest of the batch's work; at publish
the batch waits for them, renames in command order and fsyncs each directory once
— all before the batch's COMMIT, so a file always lands before the index row that
describes it. Inside :meth:`FileStage.deferred_opens` even the temp file is created
on the pool thread (creating a file costs the kernel more than writing 2 KB to it);
a file that could not be created then shows in :meth:`FileStage.check_since`, so
the writer can run the commands again with their files created at once.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ai_memory.core.errors import Conflict, InvalidPath
from ai_memory.core.paths import MAX_NAME_BYTES, TEMP_PREFIX, TEMP_TOKEN_HEX
from ai_memory.store.sync_threads import Done, SyncThreads

__all__ = ["TEMP_PREFIX", "FileStage", "atomic_write", "fsync_dir", "remove_temp_files"]


def atomic_write(path: Path, data: bytes) -> None:
    target = os.fspath(path)
    temp = _write_temp(target, data)
    try:
        _fsync_file(temp)
        os.replace(temp, target)
    except BaseException:
        _discard(temp)
        raise
    fsync_dir(os.path.dirname(target))


def fsync_dir(directory: str | Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass(frozen=True, slots=True)
class _Staged:
    target: str
    temp: str | None  # None: delete the target
    synced: Done | None = None  # the temp file written and fsynced
    opened: Done | None = None  # the temp file created (when that happens on the pool too)


class FileStage:
    """File changes of one writer batch, made durable just before it commits."""

    def __init__(self, sync_threads: int = 8) -> None:
        self._staged: list[_Staged] = []
        self._pool = SyncThreads(sync_threads, "ai-memory-fsync")
        self._deferred = False

    @contextlib.contextmanager
    def deferred_opens(self) -> Iterator[None]:
        """Create temp files on the pool thread too, while this lasts."""
        self._deferred = True
        try:
            yield
        finally:
            self._deferred = False

    def write(self, path: Path, data: bytes) -> None:
        """Stage ``data`` for ``path``; a path that cannot hold a file fails here, in its own
        command, rather than at publish time where it would fail the whole batch (with
        opens deferred, it fails in :meth:`check_since`). Paths are handled as text here:
        ``pathlib`` cost more than the system calls."""
        target = os.fspath(path)
        if self._deferred:
            temp, opened = _temp_name(target), Done()
            synced = self._pool.submit(_create, target, temp, data, opened)
            self._staged.append(_Staged(target, temp, synced, opened))
            return
        _check_target(target)
        try:
            temp, handle = _open_temp(target)
        except (NotADirectoryError, FileExistsError) as exc:
            raise Conflict(f"cannot write {path.name}: part of its folder path is a file") from exc
        self._staged.append(_Staged(target, temp, self._pool.submit(_fill, handle, data)))

    def delete(self, path: Path) -> None:
        target = os.fspath(path)
        _check_target(target)
        self._staged.append(_Staged(target, None))

    def is_staged(self, path: Path) -> bool:
        """Whether this batch already holds a change to ``path`` (not on disk yet)."""
        target = os.fspath(path)
        return any(item.target == target for item in self._staged)

    def mark(self) -> int:
        return len(self._staged)

    def check_since(self, mark: int) -> None:
        """Wait until the temp files staged since ``mark`` with opens deferred exist; raise
        the first one's failure to be created. Their write and fsync go on (and a failure
        there fails the batch at :meth:`publish`, as for any staged file)."""
        for item in self._staged[mark:]:
            if item.opened is not None:
                item.opened.result()

    def discard_since(self, mark: int) -> None:
        """Forget what a failed command staged."""
        for staged in self._staged[mark:]:
            _forget(staged)
        del self._staged[mark:]

    def publish(self) -> None:
        """Wait until every temp file is written and fsynced, rename in order, fsync each
        directory once."""
        staged, self._staged = self._staged, []
        if not staged:
            return
        try:
            for item in staged:
                if item.synced is not None:
                    item.synced.result()
            directories: set[str] = set()
            for item in staged:
                if item.temp is not None:
                    os.replace(item.temp, item.target)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(item.target)
                directories.add(os.path.dirname(item.target))
            if len(directories) == 1:  # no other to wait for at the same time
                fsync_dir(directories.pop())
            else:
                self._pool.run_all(fsync_dir, list(directories))
        except BaseException:
            for item in staged:
                _forget(item)
            raise

    def close(self) -> None:
        self.discard_since(0)
        self._pool.close()


def remove_temp_files(root: Path) -> int:
    """Delete temp files a crash left behind; call only while nothing is writing.

    Temp files sit beside pages, and no page is in a dot-folder: those (``.git`` and
    its objects above all) are not walked, which made most of this walk's time."""
    removed = 0
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for temp in [Path(folder, name) for name in names if name.startswith(TEMP_PREFIX)]:
            if temp.is_file():
                _discard(temp)
                removed += 1
    return removed


def _check_target(target: str) -> None:
    if os.path.isdir(target):
        name = os.path.basename(target)
        raise Conflict(f"cannot write {name}: a folder of that name is in the way")


def _write_temp(target: str, data: bytes) -> str:
    """Stage ``data`` beside ``target`` (written, not yet fsynced)."""
    temp, handle = _open_temp(target)
    try:
        with handle:
            handle.write(data)
    except BaseException:
        _discard(temp)
        raise
    return temp


def _open_temp(target: str) -> tuple[str, BinaryIO]:
    """A new temp file beside ``target``, its folders made first if missing."""
    temp = _temp_name(target)
    try:
        try:
            return temp, open(temp, "xb")  # closed by _fill or _forget
        except FileNotFoundError:
            os.makedirs(os.path.dirname(target), exist_ok=True)
            return temp, open(temp, "xb")
    except OSError as exc:
        if exc.errno == errno.ENAMETOOLONG:
            name = os.path.basename(target)
            raise InvalidPath(f"file path of {name[:40]!r} is too long") from exc
        raise


def _temp_name(target: str) -> str:
    """The temp file's name beside ``target``: its prefix and token count against the
    filesystem's name limit too (core/paths.py keeps page names short enough for both)."""
    folder, name = os.path.split(target)
    temp = f"{TEMP_PREFIX}{name}.{secrets.token_hex(TEMP_TOKEN_HEX // 2)}"
    if len(os.fsencode(temp)) > MAX_NAME_BYTES:
        raise InvalidPath(f"file name {name[:40]!r}... is too long for the filesystem")
    return os.path.join(folder, temp)


def _create(target: str, temp: str, data: bytes, opened: Done) -> None:
    """Create, write, fsync and close a temp file (on a pool thread); a folder where the
    file goes fails it as in :meth:`FileStage.write`. ``opened`` is set once the file
    exists (or cannot)."""
    try:
        _check_target(target)
        try:
            handle = open(temp, "xb")  # noqa: SIM115 (closed by _fill)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(temp), exist_ok=True)
            handle = open(temp, "xb")  # noqa: SIM115
    except BaseException as exc:
        opened.set(exc)
        raise
    opened.set(None)
    _fill(handle, data)


def _fill(handle: BinaryIO, data: bytes) -> None:
    """Write, fsync and close a temp file (on a pool thread)."""
    with handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


def _forget(staged: _Staged) -> None:
    """Remove a staged temp file, once its pool thread is done with it."""
    if staged.synced is not None:
        staged.synced.wait()  # a failed write is moot once the file goes
    if staged.temp is not None:
        _discard(staged.temp)


def _fsync_file(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _discard(path: str | Path) -> None:
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        os.unlink(path)
