"""Crash-safe file replacement: temp file, fsync, rename, fsync the directory.

``FileStage`` does the same for every file a writer batch touches at once: each
temp file is created when it is staged, and written and fsynced on a pool thread
from then on, so its disk wait overlaps the rest of the batch's work; at publish
the batch waits for them and renames in command order before its COMMIT, so a file
is always in place before the index row that describes it; each directory's fsync
(once) runs on a pool thread while the COMMIT writes the WAL, and the batch answers
once both are done. Inside :meth:`FileStage.deferred_opens` even the temp file is created
on the pool thread (creating a file costs the kernel more than writing 2 KB to it);
a file that could not be created then shows in :meth:`FileStage.check_since`, so
the writer can run the commands again with their files created at once.

The temp files of a wiki's pages are staged outside the wiki, in a hidden folder
beside it (see :mod:`ai_memory.store.staging`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ai_memory.core.errors import InvalidPath
from ai_memory.core.paths import MAX_NAME_BYTES, TEMP_PREFIX, TEMP_TOKEN_HEX
from ai_memory.store.staging import (
    folder_in_way,
    folder_is_file,
    raise_if_too_long,
    ready_folder,
    staging_dir,
)
from ai_memory.store.sync_threads import Done, SyncThreads

__all__ = [
    "TEMP_PREFIX",
    "FileStage",
    "atomic_write",
    "fsync_dir",
    "remove_temp_files",
    "staging_dir",
]


_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)


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
        self._staging: tuple[str, str] | None = None  # (root + separator, staging folder)

    def stage_under(self, root: Path) -> None:
        """Stage the temp files of every file beneath ``root`` in :func:`staging_dir`,
        unless that folder cannot be made or sits on another filesystem (a rename could
        not take the file across): then they stay beside their files."""
        staging = staging_dir(root)
        try:
            staging.mkdir(mode=0o700, exist_ok=True)
            same = os.stat(root).st_dev == os.stat(staging).st_dev
        except OSError:
            same = False
        self._staging = (os.path.join(os.fspath(root), ""), os.fspath(staging)) if same else None

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
        staging = self._staging_for(target)
        if self._deferred:
            temp, opened = _temp_name(target, staging), Done()
            synced = self._pool.submit(_create, target, temp, data, opened, staging is not None)
            self._staged.append(_Staged(target, temp, synced, opened))
            return
        if staging is not None:
            ready_folder(target)
            temp, fd = _open_temp(target, staging)
        else:
            _check_target(target)
            try:
                temp, fd = _open_temp(target)
            except (NotADirectoryError, FileExistsError) as exc:
                raise folder_is_file(target) from exc
        self._staged.append(_Staged(target, temp, self._pool.submit(_fill, fd, data)))

    def _staging_for(self, target: str) -> str | None:
        """The folder ``target``'s temp file goes in, if not beside it."""
        staging = self._staging
        return staging[1] if staging is not None and target.startswith(staging[0]) else None

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

    def publish(self) -> list[Done]:
        """Wait until every temp file is written and fsynced, rename in order, and start
        the fsync of each directory (once) on the sync threads. The files are in place
        when this returns; they last once every returned task is done (see
        :func:`~ai_memory.store.sync_threads.wait_all`), which the writer waits for after
        its COMMIT, so the folders' fsyncs and the COMMIT's WAL writes overlap."""
        staged, self._staged = self._staged, []
        if not staged:
            return []
        try:
            for item in staged:
                if item.synced is not None:
                    item.synced.result()
            directories: dict[str, None] = {}
            for item in staged:
                if item.temp is not None:
                    _replace(item.temp, item.target)
                else:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(item.target)
                directories[os.path.dirname(item.target)] = None
        except BaseException:
            for item in staged:
                _forget(item)
            raise
        return [self._pool.submit(fsync_dir, directory) for directory in directories]

    def close(self) -> None:
        self.discard_since(0)
        self._pool.close()


def remove_temp_files(root: Path) -> int:
    """Delete temp files a crash left behind, beside pages or in :func:`staging_dir`;
    call only while nothing is writing.

    No page is in a dot-folder: those (``.git`` and its objects above all) are not
    walked, which made most of this walk's time."""
    removed = 0
    with contextlib.suppress(OSError), os.scandir(staging_dir(root)) as entries:
        for entry in entries:
            if entry.name.startswith(TEMP_PREFIX) and entry.is_file(follow_symlinks=False):
                _discard(entry.path)
                removed += 1
    for folder, folders, names in os.walk(root):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for temp in [Path(folder, name) for name in names if name.startswith(TEMP_PREFIX)]:
            if temp.is_file():
                _discard(temp)
                removed += 1
    return removed


def _check_target(target: str) -> None:
    if os.path.isdir(target):
        raise folder_in_way(target)


def _write_temp(target: str, data: bytes) -> str:
    """Stage ``data`` beside ``target`` (written, not yet fsynced)."""
    temp, fd = _open_temp(target)
    try:
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
    except BaseException:
        _discard(temp)
        raise
    return temp


def _open_temp(target: str, staging: str | None = None) -> tuple[str, int]:
    """A new temp file beside ``target`` (or in ``staging``), the folder it goes in made
    first if missing."""
    temp = _temp_name(target, staging)
    try:
        try:
            return temp, _new_file(temp)  # closed by _fill
        except FileNotFoundError:
            os.makedirs(os.path.dirname(temp), exist_ok=True)
            return temp, _new_file(temp)
    except OSError as exc:
        raise_if_too_long(target, exc)
        raise


def _temp_name(target: str, staging: str | None = None) -> str:
    """The temp file's name beside ``target`` (or in ``staging``): its prefix and token
    count against the filesystem's name limit too (core/paths.py keeps page names short
    enough for both)."""
    folder, name = os.path.split(target)
    temp = f"{TEMP_PREFIX}{name}.{secrets.token_hex(TEMP_TOKEN_HEX // 2)}"
    if len(os.fsencode(temp)) > MAX_NAME_BYTES:
        raise InvalidPath(f"file name {name[:40]!r}... is too long for the filesystem")
    return os.path.join(staging or folder, temp)


def _create(target: str, temp: str, data: bytes, opened: Done, apart: bool) -> None:
    """Create, write, fsync and close a temp file (on a pool thread); a folder where the
    file goes fails it as in :meth:`FileStage.write`. ``opened`` is set once the file
    exists (or cannot). ``apart``: the temp file is in the staging folder."""
    try:
        if apart:
            ready_folder(target)
        else:
            _check_target(target)
        try:
            fd = _new_file(temp)
        except FileNotFoundError:
            os.makedirs(os.path.dirname(temp), exist_ok=True)
            fd = _new_file(temp)
    except BaseException as exc:
        opened.set(exc)
        raise
    opened.set(None)
    _fill(fd, data)


def _new_file(temp: str) -> int:
    """Create ``temp`` (as ``open(temp, "xb")`` would) as a bare descriptor: Python's file
    objects cost a page write's file a few more system calls (an ``fstat``, a tty check)
    and as many hand-backs of the interpreter lock to the writer thread."""
    return os.open(temp, _CREATE, 0o666)


def _fill(fd: int, data: bytes) -> None:
    """Write, fsync and close a temp file (on a pool thread)."""
    try:
        _write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _replace(temp: str, target: str) -> None:
    """Rename ``temp`` over ``target``; a target on another filesystem than the staging
    folder (a folder mounted inside the wiki) gets a copy beside it, fsynced, renamed."""
    try:
        os.replace(temp, target)
    except OSError as exc:
        if exc.errno != errno.EXDEV:
            raise
        beside = _temp_name(target)
        try:
            shutil.copyfile(temp, beside)
            _fsync_file(beside)
            os.replace(beside, target)
        except BaseException:
            _discard(beside)
            raise
        _discard(temp)


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
