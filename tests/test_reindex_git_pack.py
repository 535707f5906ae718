"""A large git checkpoint stores its blobs in one pack: read back by libgit2 and by git.

Real repositories only; the git command line, where the machine has it, checks the
pack and its index independently of the code that wrote them.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest

from ai_memory.wiki.git import PACK_AT, GitCheckpointer, commit_uncommitted, init_repository
from ai_memory.wiki.git_pack import LARGE, _write_index, blob_id, write_pack

GIT = shutil.which("git")


def loose_blobs(repo: pygit2.Repository) -> list[str]:
    objects = Path(repo.path) / "objects"
    found = []
    for file in objects.glob("??/*"):
        oid = file.parent.name + file.name
        if repo[oid].type == pygit2.enums.ObjectType.BLOB:
            found.append(oid)
    return found


def wiki_with(root: Path, count: int) -> list[str]:
    init_repository(root, "Test", "test@example.com")
    paths = []
    for i in range(count):
        path = f"default/p/notes/n{i}.md"
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"# Note {i}\n\nbody {i % 7} " + "word " * (i % 50), "utf-8")
        paths.append(path)
    (root / "default/p/notes/same.md").write_text("# Note 3\n\nbody 3 " + "word " * 3, "utf-8")
    return [*paths, "default/p/notes/same.md"]


def test_a_pack_reads_back_blob_for_blob(tmp_path: Path) -> None:
    repo = pygit2.init_repository(str(tmp_path / "r"))
    blobs = [b"", b"x", "caf\u00e9\n".encode(), b"\0\xff" * 5000, b"x"]  # one twice
    pack, count = write_pack(Path(repo.path) / "objects", iter(blobs)) or (None, 0)
    assert pack is not None and pack.with_suffix(".idx").exists()
    assert count == 4  # the repeated blob is stored once
    for data in blobs:
        oid = pygit2.Oid(raw=blob_id(data))
        assert repo[oid].data == data
        assert str(repo.create_blob(data)) == str(oid)  # the id git itself gives it
    assert write_pack(Path(repo.path) / "objects", iter([])) is None
    assert list((Path(repo.path) / "objects" / "pack").glob("tmp_*")) == []
    if GIT:
        verified = subprocess.run(
            [GIT, "verify-pack", "-v", str(pack.with_suffix(".idx"))], capture_output=True
        )
        assert verified.returncode == 0, verified.stderr


def test_a_large_checkpoint_writes_one_pack_and_no_loose_blob(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    paths = wiki_with(root, PACK_AT + 10)
    assert commit_uncommitted(str(root), "Test", "test@example.com") is None
    repo = pygit2.Repository(str(root))
    assert repo.status() == {}
    assert len(list((Path(repo.path) / "objects" / "pack").glob("*.pack"))) == 1
    page_blobs = {blob_id((root / path).read_bytes()).hex() for path in paths}
    assert page_blobs & set(loose_blobs(repo)) == set()  # .gitignore's predates the pack
    tree = repo.head.peel(pygit2.Commit).tree
    for path in paths:
        assert (tree / path).data == (root / path).read_bytes()
    # A small checkpoint after it stays loose; a file changed back to a packed blob's
    # bytes is found in the pack.
    (root / paths[0]).write_text("changed", "utf-8")
    (root / paths[1]).write_bytes((root / paths[2]).read_bytes())
    checkpointer = GitCheckpointer(root, interval=0.05, author="Test", email="t@example.com")
    checkpointer.notify(paths[0], paths[1])
    checkpointer.flush()
    tree = repo.head.peel(pygit2.Commit).tree
    assert (tree / paths[0]).data == b"changed"
    assert (tree / paths[1]).data == (root / paths[2]).read_bytes()
    assert repo.status() == {}
    if GIT:
        fsck = subprocess.run([GIT, "fsck", "--full", "--strict"], cwd=root, capture_output=True)
        assert fsck.returncode == 0, fsck.stderr


def test_a_checkpoint_with_deletions_and_a_folder_path_packs_what_exists(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    paths = wiki_with(root, PACK_AT + 1)
    assert commit_uncommitted(str(root), "Test", "test@example.com") is None
    for path in paths[:3]:
        (root / path).unlink()
    for path in paths[3:]:
        (root / path).write_text(f"{path} edited", "utf-8")
    checkpointer = GitCheckpointer(root, interval=0.05, author="Test", email="t@example.com")
    checkpointer.notify(*paths, "default/p/notes")  # a folder among the paths is skipped
    checkpointer.flush()
    repo = pygit2.Repository(str(root))
    assert repo.status() == {}
    tree = repo.head.peel(pygit2.Commit).tree
    assert all(path not in tree for path in paths[:3])
    assert (tree / paths[-1]).data == f"{paths[-1]} edited".encode()
    assert len(list((Path(repo.path) / "objects" / "pack").glob("*.pack"))) == 2


@pytest.mark.skipif(GIT is None, reason="needs the git command line to read the index alone")
def test_offsets_past_two_gigabytes_go_to_the_large_table(tmp_path: Path) -> None:
    ids = [blob_id(b"a"), blob_id(b"b"), blob_id(b"c")]
    entries = {ids[0]: (1, 12), ids[1]: (2, LARGE + 10), ids[2]: (3, 5 * LARGE)}
    index = tmp_path / "pack-x.idx"
    _write_index(index, entries, b"\0" * 20)
    shown = subprocess.run([str(GIT), "show-index"], stdin=index.open("rb"), capture_output=True)
    assert shown.returncode == 0, shown.stderr
    offsets = {line.split()[1]: int(line.split()[0]) for line in shown.stdout.decode().splitlines()}
    assert offsets == {oid.hex(): entries[oid][1] for oid in ids}
