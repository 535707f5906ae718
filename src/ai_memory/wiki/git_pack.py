"""Storing many new blobs in one git pack instead of one loose object file each.

Git stores a new blob as a file of its own under ``objects/``: a temporary file, a
link and an unlink each, which on a journaling filesystem costs most of a
millisecond of system time per blob. A checkpoint of thousands of files (a
reindex of a new wiki, the recovery of a crash) writes them into one pack file
and its index instead (the documented version-2 formats: ``gitformat-pack``),
and adding the files to git's index then finds each blob already stored.
libgit2 reads the pack as it reads the packs ``git gc`` makes, checking every
object's hash when it reads it.
"""

from __future__ import annotations

import hashlib
import os
import struct
import zlib
from collections.abc import Iterable
from pathlib import Path

BLOB = 3  # the pack's object type for a blob
LEVEL = 1  # zlib's fastest level, as git uses for loose objects
LARGE = 0x7FFF_FFFF  # offsets past this go into the index's 8-byte table


def blob_id(data: bytes) -> bytes:
    """The object id git gives ``data`` stored as a blob (SHA-1 of header and bytes)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).digest()


def _deflate(data: bytes) -> bytes:
    """``zlib.compress(data, LEVEL)`` with a window no larger than the data: the same
    bytes out for a page, at a fraction of the CPU (zlib's full 32 KB window and tables
    cost more to set up than a 2 KB page costs to compress). Any zlib reader accepts it."""
    window = min(15, max(9, (len(data) - 1).bit_length()))
    compressor = zlib.compressobj(LEVEL, zlib.DEFLATED, window)
    return compressor.compress(data) + compressor.flush()


def _header(kind: int, size: int) -> bytes:
    """The object's type and size: 4 bits of size in the first byte, 7 in each next."""
    out = bytearray([(kind << 4) | (size & 0x0F)])
    size >>= 4
    while size:
        out[-1] |= 0x80
        out.append(size & 0x7F)
        size >>= 7
    return bytes(out)


def write_pack(objects_dir: Path, blobs: Iterable[bytes]) -> tuple[Path, int] | None:
    """Write ``blobs`` as one pack (and its index) under ``objects_dir/pack``.

    Returns the pack's path and its object count, or None when there was nothing to
    write. The pack is complete on disk before its index appears, so a reader never
    finds an index whose pack is partial; a blob given twice is stored once.
    """
    return write_identified(objects_dir, ((blob_id(data), data) for data in blobs))


def write_identified(
    objects_dir: Path, blobs: Iterable[tuple[bytes, bytes]]
) -> tuple[Path, int] | None:
    """:func:`write_pack` of ``(blob id, bytes)`` pairs whose ids the caller has already."""
    pack_dir = objects_dir / "pack"
    pack_dir.mkdir(exist_ok=True)
    temp = pack_dir / f"tmp_pack_{os.getpid()}"
    entries: dict[bytes, tuple[int, int]] = {}  # id -> (crc32, offset)
    checksum = hashlib.sha1(usedforsecurity=False)
    try:
        with open(temp, "wb") as out:
            out.write(b"\0" * 12)  # the header, once the count is known
            offset = 12
            for oid, data in blobs:
                if oid in entries:
                    continue
                record = _header(BLOB, len(data)) + _deflate(data)
                entries[oid] = (zlib.crc32(record), offset)
                out.write(record)
                offset += len(record)
            if not entries:
                return None
            out.seek(0)
            out.write(b"PACK" + struct.pack(">II", 2, len(entries)))
        with open(temp, "rb") as done:  # the trailer hashes the header written last
            while block := done.read(1 << 20):
                checksum.update(block)
        pack_sum = checksum.digest()
        with open(temp, "ab") as out:
            out.write(pack_sum)
            out.flush()
            os.fsync(out.fileno())
        name = f"pack-{pack_sum.hex()}"
        pack = pack_dir / f"{name}.pack"
        os.replace(temp, pack)
        _write_index(pack_dir / f"{name}.idx", entries, pack_sum)
    finally:
        temp.unlink(missing_ok=True)
    return pack, len(entries)


def _write_index(path: Path, entries: dict[bytes, tuple[int, int]], pack_sum: bytes) -> None:
    """The version-2 pack index: fan-out table, sorted ids, CRCs, offsets, checksums."""
    ids = sorted(entries)
    fanout = [0] * 256
    for oid in ids:
        fanout[oid[0]] += 1
    running = 0
    for byte in range(256):
        running += fanout[byte]
        fanout[byte] = running
    small: list[int] = []
    large: list[int] = []
    for oid in ids:
        offset = entries[oid][1]
        if offset > LARGE:
            small.append(0x8000_0000 | len(large))
            large.append(offset)
        else:
            small.append(offset)
    body = b"".join(
        [
            b"\xfftOc" + struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            *ids,
            struct.pack(f">{len(ids)}I", *(entries[oid][0] for oid in ids)),
            struct.pack(f">{len(small)}I", *small),
            struct.pack(f">{len(large)}Q", *large),
            pack_sum,
        ]
    )
    temp = path.with_name(f"tmp_idx_{os.getpid()}")
    with open(temp, "wb") as out:
        out.write(body + hashlib.sha1(body, usedforsecurity=False).digest())
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, path)
