"""Git checkpoints: one commit for a stream of writes, index entries git itself trusts,
and whatever a SIGKILL left uncommitted committed at the next start.

Real repositories, read back by libgit2 and by the git command line where the machine
has it; a real server for the crash.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pygit2
import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from ai_memory.wiki.git import PACK_AT, GitCheckpointer, init_repository
from tests.conftest import ServerProcess, clean_env

GIT = shutil.which("git")
PAGES = "/api/v1/projects/default/git/pages"


def wiki(tmp_path: Path) -> Path:
    root = tmp_path / "wiki"
    init_repository(root, "Test", "test@example.com")
    return root


def write(root: Path, path: str, text: str) -> str:
    (root / path).parent.mkdir(parents=True, exist_ok=True)
    (root / path).write_text(text, "utf-8")
    return path


def head_tree(root: Path) -> pygit2.Tree:
    return pygit2.Repository(str(root)).head.peel(pygit2.Commit).tree


def eventually(check: Callable[[], bool], seconds: float = 30.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check() and time.monotonic() < deadline:
        time.sleep(0.05)
    return check()


def git(root: Path, *args: str) -> str:
    assert GIT is not None
    done = subprocess.run([GIT, *args], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_stream_of_writes_is_one_commit_after_the_first(tmp_path: Path) -> None:
    root = wiki(tmp_path)
    checkpointer = GitCheckpointer(root, interval=3600, author="Test", email="t@example.com")
    checkpointer.start(recover=False)
    paths = [write(root, f"default/p/n{i}.md", f"note {i}") for i in range(40)]
    for path in paths:
        checkpointer.notify(path)
    checkpointer.stop()  # the thread waits out its interval: the rest is the shutdown's
    assert 1 <= checkpointer.commits <= 2
    tree = head_tree(root)
    assert all((tree / path).data == (root / path).read_bytes() for path in paths)
    assert pygit2.Repository(str(root)).status() == {}


def test_other_repositories_in_the_process_keep_libgits_object_check(tmp_path: Path) -> None:
    """The checkpoint writes its trees unchecked (it checks its own blobs): the option is
    process-wide, so a checkpoint leaves it as libgit2's default for everyone else."""
    root = wiki(tmp_path)
    checkpointer = GitCheckpointer(root, interval=3600, author="Test", email="t@example.com")
    checkpointer.notify(write(root, "default/p/a.md", "a"))
    checkpointer.flush()
    assert (head_tree(root) / "default/p/a.md").data == b"a"
    other = pygit2.init_repository(str(tmp_path / "other"))
    builder = other.TreeBuilder()
    with pytest.raises(pygit2.GitError):
        builder.insert("gone.md", pygit2.Oid(hex="1" * 40), pygit2.enums.FileMode.BLOB)


@pytest.mark.parametrize("count", [3, PACK_AT + 5], ids=["loose", "packed"])
def test_entries_carry_the_stat_data_git_add_records(tmp_path: Path, count: int) -> None:
    root = wiki(tmp_path)
    paths = [write(root, f"default/p/n{i}.md", f"note {i}\n" * (i + 1)) for i in range(count)]
    script = write(root, "default/p/run.md", "executable\n")
    os.chmod(root / script, 0o755)
    os.symlink("n0.md", root / "default/p/link.md")
    checkpointer = GitCheckpointer(root, interval=0.05, author="Test", email="t@example.com")
    checkpointer.notify(*paths, script, "default/p/link.md", "default/p/missing.md")
    checkpointer.flush()
    repo = pygit2.Repository(str(root))
    assert repo.status() == {}
    tree = head_tree(root)
    assert (tree / script).filemode == pygit2.enums.FileMode.BLOB_EXECUTABLE
    assert (tree / "default/p/link.md").filemode == pygit2.enums.FileMode.LINK
    assert "default/p/missing.md" not in tree
    entry = repo.index[paths[0]]
    assert str(entry.id) == str(tree[paths[0]].id)
    if GIT:
        info = (root / paths[0]).stat()
        shown = git(root, "ls-files", "--debug", paths[0])
        assert f"mtime: {info.st_mtime_ns // 10**9}:{info.st_mtime_ns % 10**9}" in shown
        assert f"ino: {info.st_ino}" in shown and f"size: {info.st_size}" in shown
        assert git(root, "status", "--porcelain") == ""
        git(root, "fsck", "--full", "--strict")
        # An edit the same size as the file, its time moved on: git sees it from the stat.
        (root / paths[1]).write_text("NOTE 1\n" * 2, "utf-8")
        later = (root / paths[1]).stat().st_mtime_ns + 2_000_000_000
        os.utime(root / paths[1], ns=(later, later))
        assert git(root, "status", "--porcelain").split() == ["M", paths[1]]


def test_a_wiki_with_attributes_is_added_through_gits_filters(tmp_path: Path) -> None:
    root = wiki(tmp_path)
    write(root, ".gitattributes", "*.md text eol=lf\n")
    path = write(root, "default/p/crlf.md", "")
    (root / path).write_bytes(b"line one\r\nline two\r\n")
    checkpointer = GitCheckpointer(root, interval=0.05, author="Test", email="t@example.com")
    checkpointer.notify(path)
    checkpointer.flush()
    assert (head_tree(root) / path).data == b"line one\nline two\n"


def test_writes_a_sigkill_left_uncommitted_are_committed_at_the_next_start(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    initialise(Config.load(data_dir, {}))
    env = clean_env(AI_MEMORY_WIKI__CHECKPOINT_INTERVAL_S="3600")
    server = ServerProcess(data_dir, env=env).start()
    try:
        root = data_dir / "wiki"
        with server.client() as client:
            assert client.put(f"{PAGES}/n0.md", json={"body": "note 0"}).status_code == 200
            # Committed at once; the checkpointer then waits out its hour.
            assert eventually(lambda: "default/git/n0.md" in head_tree(root))
            for i in range(1, 20):
                answer = client.put(f"{PAGES}/n{i}.md", json={"body": f"note {i}"})
                assert answer.status_code == 200
        server.kill()
        assert "default/git/n19.md" not in head_tree(root)
        server = ServerProcess(data_dir, env=clean_env()).start()
        assert eventually(lambda: "default/git/n19.md" in head_tree(root))
        tree = head_tree(root)
        for i in range(20):
            assert (tree / f"default/git/n{i}.md").data == (
                root / f"default/git/n{i}.md"
            ).read_bytes()
    finally:
        server.stop()
