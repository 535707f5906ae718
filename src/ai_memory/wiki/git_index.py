"""Putting a checkpoint's files into git's index from one read of each.

``Index.add(path)`` makes libgit2 stat the file, look up its attributes and filters,
read it, hash it and look the blob up again — most of a checkpoint's CPU, and each
file had already been read and hashed once to store its blob. Here every file is
opened once: its bytes give the blob (stored as one pack for a large checkpoint,
see :mod:`ai_memory.wiki.git_pack`, else as a loose object), and the ``fstat`` of
the same open file gives the entry's stat data, so ``git status`` (and the next
start's recovery) trusts the entry exactly as it trusts one ``git add`` made: the
bytes stored are the bytes the stat describes, even if the file is replaced while
it is read.

A wiki whose attributes or settings could change what git stores for a file (a
``.gitattributes``, ``core.autocrlf``) is added by path, with libgit2's filters.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ai_memory.wiki.git_pack import blob_id, write_identified

if TYPE_CHECKING:
    import pygit2

FILE = 0o100644
EXECUTABLE = 0o100755
_MASK = 0xFFFF_FFFF  # the index keeps 32 bits of each stat field


@dataclass(frozen=True, slots=True)
class _Read:
    path: str
    oid: bytes
    info: tuple[int, ...]  # what the entry keeps of the file's stat: see _stat_fields


def stage(repo: pygit2.Repository, root: Path, paths: list[str], *, pack: bool) -> list[bytes]:
    """Bring ``repo.index`` (already read) to the files at ``paths`` as they are now:
    added, updated or removed. ``pack``: store the new blobs as one pack. Returns the ids
    of the blobs this wrote into entries itself (libgit2 checks those it adds by path)."""
    index = repo.index
    if _filtered(repo, root):
        _stage_by_path(index, root, paths)
        return []
    odb = repo.odb
    read: list[_Read] = []
    by_path: list[str] = []  # neither a regular file nor gone: libgit2 decides

    def blobs() -> Iterator[tuple[bytes, bytes]]:
        for path in paths:
            outcome = _read(root / path)
            if isinstance(outcome, str):
                if outcome == "other":
                    by_path.append(path)
                elif path in index:
                    index.remove(path)
                continue
            data, info = outcome
            oid = blob_id(data)
            read.append(_Read(path, oid, _stat_fields(info)))
            # Not looked up first: a checkpoint's files are nearly all new and a miss
            # rescans the pack folder; a blob an older pack holds too is harmless (git
            # reads either copy), and a loose write of a known blob writes nothing.
            yield oid, data

    if pack:
        write_identified(Path(repo.path) / "objects", blobs())
    else:
        import pygit2

        for _, data in blobs():
            odb.write(pygit2.enums.ObjectType.BLOB, data)
    for item in read:
        _add_entry(index, item)
    for path in by_path:
        index.add(path)
    return [item.oid for item in read]


def _read(file: Path) -> tuple[bytes, os.stat_result] | str:
    """The file's bytes and the stat of that same open file; ``"gone"`` for a missing
    file or a folder, ``"other"`` for a symlink or anything else git adds its own way."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return "gone"
    except OSError:  # a symlink, or a file this process may not read: as ``git add`` does
        return "other" if file.is_file() else "gone"
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            return "gone"
        if not stat.S_ISREG(info.st_mode):
            return "other"
        with os.fdopen(fd, "rb", closefd=False) as handle:
            return handle.read(), info
    finally:
        os.close(fd)


def _add_entry(index: pygit2.Index, item: _Read) -> None:
    """``git_index_add`` with the stat data ``git add`` would record for the file."""
    from pygit2.errors import check_error
    from pygit2.ffi import C, ffi

    ctime_ns, mtime_ns, dev, ino, mode, uid, gid, size = item.info
    entry = ffi.new("git_index_entry *")
    ffi.buffer(ffi.addressof(entry, "id"))[:] = item.oid
    entry.ctime.seconds, entry.ctime.nanoseconds = _split(ctime_ns)
    entry.mtime.seconds, entry.mtime.nanoseconds = _split(mtime_ns)
    entry.dev, entry.ino, entry.mode = dev, ino, mode
    entry.uid, entry.gid, entry.file_size = uid, gid, size
    path = ffi.new("char[]", os.fsencode(item.path))
    entry.path = path
    check_error(C.git_index_add(index._index, entry), io=True)


def _stat_fields(info: os.stat_result) -> tuple[int, ...]:
    """The stat fields an index entry records, cut to its 32 bits (a few ints per file,
    not a whole stat result, for a checkpoint of every file of a large wiki)."""
    mode = EXECUTABLE if info.st_mode & stat.S_IXUSR else FILE
    return (
        info.st_ctime_ns,
        info.st_mtime_ns,
        info.st_dev & _MASK,
        info.st_ino & _MASK,
        mode,
        info.st_uid & _MASK,
        info.st_gid & _MASK,
        info.st_size & _MASK,
    )


def _split(ns: int) -> tuple[int, int]:
    """Seconds as the index's signed 32 bits hold them (as libgit2 casts), nanoseconds."""
    seconds, nanoseconds = divmod(ns, 1_000_000_000)
    return (seconds + 2**31) % 2**32 - 2**31, nanoseconds


def _filtered(repo: pygit2.Repository, root: Path) -> bool:
    """Whether git could store something other than a file's bytes for it."""
    if (root / ".gitattributes").exists() or (Path(repo.path) / "info" / "attributes").exists():
        return True
    try:
        autocrlf = repo.config["core.autocrlf"]
    except KeyError:
        return False
    return str(autocrlf).lower() not in ("false", "no", "off", "0", "")


def _stage_by_path(index: pygit2.Index, root: Path, paths: list[str]) -> None:
    for path in paths:
        if (root / path).is_file():
            index.add(path)
        elif path in index:
            index.remove(path)
