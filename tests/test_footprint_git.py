"""What a git checkpoint leaves behind: an index whose tree cache is valid on disk.

The tree cache lets a checkpoint rebuild only the folders it changed; when the
index on disk holds it invalid, every checkpoint rebuilds every tree and reads
the header of every blob (most of the packs resident on a large wiki). Real
repositories; the index file is read as git's format defines it.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pygit2

from ai_memory.wiki.git import PACK_AT, GitCheckpointer, init_repository

ENTRY_FIXED = 62  # bytes of an index entry before its path (versions 2 and 3)
EXTENDED = 0x4000


def tree_cache(index_file: Path) -> dict[str, int]:
    """Each folder of the TREE extension with its entry count (-1: invalid)."""
    data = index_file.read_bytes()
    signature, version, count = struct.unpack(">4sII", data[:12])
    assert signature == b"DIRC" and version in (2, 3)
    offset = 12
    for _ in range(count):
        flags = struct.unpack(">H", data[offset + 60 : offset + 62])[0]
        fixed = ENTRY_FIXED + (2 if flags & EXTENDED else 0)
        end = data.index(b"\0", offset + fixed)
        offset += (end - offset + 8) // 8 * 8  # the path, NUL-padded to a multiple of 8
    found: dict[str, int] = {}
    while offset < len(data) - 20:  # the last 20 bytes are the checksum
        name, size = struct.unpack(">4sI", data[offset : offset + 8])
        body = data[offset + 8 : offset + 8 + size]
        offset += 8 + size
        if name == b"TREE":
            found.update(_folders(body))
    return found


def _folders(body: bytes) -> dict[str, int]:
    found, at = {}, 0
    while at < len(body):
        end = body.index(b"\0", at)
        path = body[at:end].decode()
        line_end = body.index(b"\n", end)
        entries = int(body[end + 1 : line_end].split(b" ")[0])
        found[path] = entries
        at = line_end + 1 + (20 if entries >= 0 else 0)
    return found


def checkpointer(root: Path) -> GitCheckpointer:
    return GitCheckpointer(root, interval=0.05, author="Test", email="test@example.com")


def write_files(root: Path, paths: list[str]) -> None:
    for path in paths:
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# {path}\n", "utf-8")


def test_the_index_on_disk_keeps_a_valid_tree_cache_after_each_checkpoint(
    tmp_path: Path,
) -> None:
    root = tmp_path / "wiki"
    init_repository(root, "Test", "test@example.com")
    git = checkpointer(root)
    many = [f"default/{kind}/p{i}.md" for kind in ("notes", "concepts") for i in range(PACK_AT)]
    write_files(root, many)  # a large first commit: its blobs go in one pack
    git.notify(*many)
    git.flush()
    write_files(root, ["default/notes/one-more.md"])
    git.notify("default/notes/one-more.md")
    git.flush()

    cache = tree_cache(root / ".git" / "index")
    assert cache[""] == len(many) + 2  # the root: every file and .gitignore
    assert cache["notes"] == PACK_AT + 1
    assert all(entries >= 0 for entries in cache.values()), cache
    head = pygit2.Repository(str(root)).head.peel(pygit2.Commit)
    assert "default/notes/one-more.md" in head.tree


def test_a_checkpoint_after_a_restart_commits_from_the_saved_cache(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    init_repository(root, "Test", "test@example.com")
    first = checkpointer(root)
    write_files(root, ["default/a/x.md", "default/b/y.md"])
    first.notify("default/a/x.md", "default/b/y.md")
    first.flush()
    again = checkpointer(root)  # a new process's checkpointer reads the index from disk
    (root / "default/a/x.md").write_text("changed\n", "utf-8")
    again.notify("default/a/x.md")
    again.flush()

    tree = pygit2.Repository(str(root)).head.peel(pygit2.Commit).tree
    blob = tree["default/a/x.md"]
    assert isinstance(blob, pygit2.Blob) and blob.data == b"changed\n"
    assert "default/b/y.md" in tree
    assert all(entries >= 0 for entries in tree_cache(root / ".git" / "index").values())
