"""Git checkpoints of the wiki, batched on a background thread.

Writes notify the checkpointer of the paths they touched; the thread commits
what is pending at most once per interval, and at once on shutdown. At start,
whatever a crash left uncommitted is found through ``git status`` and committed,
on the thread, so a start does not wait for it.
The repository is opened (and pygit2 loaded) at the first commit, so a process
that never commits never pays for it.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from ai_memory.store.files import TEMP_PREFIX
from ai_memory.store.heap import trim_heap
from ai_memory.wiki.git_index import stage

if TYPE_CHECKING:
    import pygit2

log = logging.getLogger(__name__)

GITIGNORE = f"{TEMP_PREFIX}*\n.obsidian/\n.DS_Store\n"
# A checkpoint of at least this many files stores their blobs in one pack first.
PACK_AT = 64


def init_repository(root: Path, author: str, email: str) -> bool:
    """Create the wiki repository with a first commit; False if it already existed."""
    import pygit2

    if (root / ".git").exists():
        return False
    root.mkdir(parents=True, exist_ok=True)
    repo = pygit2.init_repository(str(root), initial_head="main")
    (root / ".gitignore").write_text(GITIGNORE, encoding="utf-8")
    repo.index.add(".gitignore")
    repo.index.write()
    signature = pygit2.Signature(author, email)
    tree = repo.index.write_tree()
    repo.create_commit("HEAD", signature, signature, "wiki: initialise", tree, [])
    return True


class GitCheckpointer:
    def __init__(self, root: Path, *, interval: float, author: str, email: str) -> None:
        self.root = root
        self.interval = interval
        self._signature = (author, email)
        self._pending: set[str] = set()
        self._cond = threading.Condition()
        self._git_lock = threading.Lock()
        self._stopping = False
        self._stopped = threading.Event()  # ends the wait between two commits
        self._thread: threading.Thread | None = None
        self._repo: pygit2.Repository | None = None
        self.commits = 0

    def start(self, *, recover: bool = True) -> None:
        """The thread first commits what a crash left (``git status`` over the whole wiki
        is slow, and nothing waits for it: a stop waits for the thread). ``recover=False``
        leaves that to :meth:`recover` (a reindex calls it once every file has been read)."""
        self._thread = threading.Thread(
            target=self._run, args=(recover,), name="ai-memory-git", daemon=True
        )
        self._thread.start()

    def notify(self, *relpaths: str) -> None:
        """Note paths for the next commit. Only the first path since a commit wakes the
        thread: under a stream of writes it is waiting out the interval, not woken by each."""
        with self._cond:
            idle = not self._pending
            self._pending.update(relpaths)
            if idle:
                self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopping = True
            self._stopped.set()
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        self._commit(self._take(), "checkpoint: shutdown")

    def recover(self) -> None:
        """Commit every change ``git status`` shows, with whatever is pending."""
        with self._git_lock:
            paths = self._leftovers() | self._take()
        self._commit(paths, "checkpoint: recover uncommitted changes")

    def flush(self) -> None:
        """Commit whatever is pending now, from the calling thread."""
        self._commit(self._take(), "checkpoint")

    def _take(self) -> set[str]:
        with self._cond:
            paths, self._pending = self._pending, set()
        return paths

    def _run(self, recover: bool) -> None:
        if recover:
            try:
                self.recover()
            except Exception:  # the files are safe on disk; the next start looks again
                log.exception("git recovery of uncommitted changes failed")
        while True:
            with self._cond:
                while not self._pending and not self._stopping:
                    self._cond.wait()
                if self._stopping:
                    return
            self._commit(self._take(), "checkpoint")
            self._stopped.wait(self.interval)  # at most one commit per interval

    def _open(self) -> pygit2.Repository:
        """The repository; called with the git lock held."""
        if self._repo is None:
            import pygit2

            self._repo = pygit2.Repository(str(self.root))
        return self._repo

    def _close(self) -> None:
        """Let the repository go, called with the git lock held: its index (~20 MB at
        100,000 pages) would stay resident between checkpoints; the next one reloads it.
        ``free()`` releases the index and object database at once, as pygit2 keeps the
        repository in reference cycles that only a full collection would break."""
        if self._repo is not None:
            self._repo.free()
            self._repo = None
        trim_heap()

    def _leftovers(self) -> set[str]:
        try:
            return {path for path in self._open().status() if not path.startswith(".")}
        finally:
            self._close()

    def _commit(self, paths: set[str], message: str) -> None:
        if not paths:
            return
        try:
            with self._git_lock:
                try:
                    self._commit_paths(self._open(), sorted(paths), message)
                finally:
                    self._close()
        except Exception:
            # The files are safe on disk; keep their paths for the next attempt (a user's
            # own git holding index.lock, say) rather than waiting for a restart.
            log.exception("git checkpoint failed; will retry")
            with self._cond:
                self._pending.update(paths)

    def _commit_paths(self, repo: pygit2.Repository, paths: list[str], message: str) -> None:
        import pygit2

        index = repo.index
        index.read(False)  # only if changed on disk: a forced read holds two copies at once
        written = stage(repo, self.root, paths, pack=len(paths) >= PACK_AT)
        # A blob gone since it was written (a user's ``git prune`` of what no commit names
        # yet) fails the checkpoint, which the retry writes again, rather than a commit
        # naming a missing object.
        odb = repo.odb
        missing = sum(not odb.exists(pygit2.Oid(raw=oid)) for oid in written)
        if missing:
            raise RuntimeError(f"{missing} blobs just written are gone from the repository")
        # The tree first: write_tree fills the index's tree cache, and writing the index
        # after it saves that cache, so the next checkpoint rebuilds only the folders it
        # changed. Written before, the cache of every folder a large commit touched stays
        # invalid on disk for good, and each checkpoint rebuilds every tree, reading the
        # header of every blob in the packs (most of a pack resident at 100,000 pages).
        with _unchecked_tree_entries():
            tree = index.write_tree()
        index.write()
        head = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit)
        if head is not None and head.tree_id == tree:
            return
        parents = [head.id] if head is not None else []
        signature = pygit2.Signature(*self._signature)
        listed = "\n".join(paths[:50]) + ("\n…" if len(paths) > 50 else "")
        summary = f"{message}: {len(paths)} page{'s' if len(paths) != 1 else ''}"
        repo.create_commit("HEAD", signature, signature, f"{summary}\n\n{listed}\n", tree, parents)
        self.commits += 1


@contextlib.contextmanager
def _unchecked_tree_entries() -> Iterator[None]:
    """Write trees without libgit2 looking up every blob they name.

    Otherwise writing a tree reads the header of each blob in it: a checkpoint inflated
    every loose object of each folder it touched, a cost that grew with the folder (3-4x
    a checkpoint's CPU at 2,000-8,000 pages in one folder). The blobs this checkpoint
    wrote were just checked; the others are named by the last commit already. The option
    is libgit2's, for the whole process, so it is off only for this call (checkpoints are
    serialised by the git lock) and back to libgit2's default after it.
    """
    import pygit2

    strict = pygit2.enums.Option.ENABLE_STRICT_OBJECT_CREATION
    pygit2.option(strict, False)
    try:
        yield
    finally:
        pygit2.option(strict, True)


def commit_uncommitted(root: str, author: str, email: str) -> str | None:
    """One checkpoint of every change ``git status`` shows; what went wrong, if anything.

    A reindex runs it in a worker process beside the indexing, as the files do not
    change while it holds the data dir.
    """
    checkpointer = GitCheckpointer(Path(root), interval=0.05, author=author, email=email)
    try:
        checkpointer.recover()
    except Exception as exc:  # the index is built either way; the next start retries
        return f"git checkpoint failed ({exc}); the next start retries"
    if checkpointer._pending:  # kept for a retry: the commit failed (logged)
        return (
            f"git checkpoint of {len(checkpointer._pending)} files failed; the next start retries"
        )
    return None
