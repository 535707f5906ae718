"""The running parts of one data dir, started and stopped in the right order.

The server and the direct-disk lifecycle commands (reindex) both build one;
nothing here is global, every part is handed to what needs it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ai_memory.config import Config
from ai_memory.core.errors import NotInitialised
from ai_memory.hygiene import journal as relocation
from ai_memory.maintenance.merging import reclaim_space
from ai_memory.store.db import release_wal
from ai_memory.store.files import remove_temp_files
from ai_memory.store.heap import release_heap
from ai_memory.store.readers import ReaderPool
from ai_memory.store.upgrade import prepare_upgrade
from ai_memory.store.writer import Writer
from ai_memory.wiki.git import GitCheckpointer
from ai_memory.wiki.reindex import Progress, ReconcileReport, reconcile
from ai_memory.wiki.wiki import Wiki

if TYPE_CHECKING:
    from ai_memory.hooks.sanitize import Sanitizer
    from ai_memory.llm.chat import Chat
    from ai_memory.retrieval.search import Retriever
    from ai_memory.wiki.parse_pool import ParsePool
    from ai_memory.wiki.watcher import WikiWatcher

log = logging.getLogger(__name__)


@dataclass
class Runtime:
    config: Config
    writer: Writer
    readers: ReaderPool
    checkpointer: GitCheckpointer
    wiki: Wiki
    startup_report: ReconcileReport | None = None
    watcher: WikiWatcher | None = None
    llm: Chat | None = None  # set by the server when [llm] provider is not 'none'
    unsettled: bool = False  # :meth:`settle` has work left (``Runtime.start(settle=False)``)
    recover_later: bool = False  # :meth:`settle` commits what a crash left to git
    retrieval: Retriever = field(init=False)

    @classmethod
    def start(
        cls,
        config: Config,
        *,
        reconcile_wiki: bool = True,
        watch: bool = False,
        embed: bool = True,
        search: bool = True,
        recover_git: bool = True,
        settle: bool = True,
    ) -> Runtime:
        """``watch`` follows hand edits of the wiki while running (the server sets it);
        ``embed`` runs the background embedder when vectors are configured (a lifecycle
        command that never searches turns it off, and ``search=False`` builds no retriever
        at all); ``recover_git=False`` leaves the commit of uncommitted files to the caller
        (``checkpointer.recover()``), which a reindex makes once it has read every file.
        ``settle=False`` leaves to :meth:`settle` what nothing waits for after the check:
        the server calls it once its first answers are out."""
        if not (config.wiki_dir / ".git").exists() or not config.db_path.exists():
            raise NotInitialised(f"{config.data_dir} is not initialised; run `ai-memory init`")
        remove_temp_files(config.wiki_dir)  # left by a crash mid-write; never published
        prepare_upgrade(config.db_path, config.backups_dir)  # refuse newer, back up older
        if relocation.recover(config.db_path):  # a rename/merge a crash cut short
            log.warning("undid the file moves of a project rename or merge cut short")
        writer = Writer(
            config.db_path,
            queue_size=config.store.queue_size,
            max_batch=config.store.max_batch,
            synchronous=config.store.synchronous,
        )
        writer.start()
        readers = ReaderPool(config.db_path, config.store.readers)
        checkpointer = GitCheckpointer(
            config.wiki_dir,
            interval=config.wiki.checkpoint_interval_s,
            author=config.wiki.git_author,
            email=config.wiki.git_email,
        )
        checkpointer.start(recover=recover_git and settle)
        wiki = Wiki(
            config.wiki_dir,
            writer,
            readers,
            checkpointer,
            max_page_bytes=config.wiki.max_page_bytes,
            write_timeout=config.store.write_timeout_s,
        )
        runtime = cls(config, writer, readers, checkpointer, wiki, unsettled=not settle)
        runtime.recover_later = recover_git and not settle
        try:
            if search:
                from ai_memory.retrieval.setup import build_retriever

                runtime.retrieval = build_retriever(config, readers, writer, background=embed)
            runtime._catch_up(reconcile_wiki)
        except BaseException:
            runtime.stop()
            raise
        if watch and config.wiki.watch:
            from ai_memory.wiki.watcher import WikiWatcher

            runtime.watcher = WikiWatcher(wiki)
            runtime.watcher.start()
        return runtime

    @cached_property
    def sanitizer(self) -> Sanitizer:
        """The hook sanitizer, its patterns compiled once (about 0.1 s): hook capture and
        every other surface that stores untrusted text (cross-project messages) share it."""
        from ai_memory.hooks.sanitize import Sanitizer

        return Sanitizer(self.config.hooks.redact_patterns)

    @property
    def reindex_marker(self) -> Path:
        return self.config.db_path.parent / "reindex-incomplete"

    def reindex(
        self,
        progress: Progress | None = None,
        pool: ParsePool | None = None,
        checkpoint: bool = True,
    ) -> ReconcileReport:
        """Rebuild everything derived from the wiki. An interrupted rebuild leaves a marker
        so the next start finishes it instead of serving a half-built index.
        ``checkpoint=False``: the caller commits the changed files to git itself."""
        self.reindex_marker.touch()
        report = reconcile(
            self.wiki, full=True, progress=progress, pool=pool, checkpoint=checkpoint
        )
        reclaim_space(self.writer, None)  # the old index's pages the new one did not reuse
        self.reindex_marker.unlink()
        return report

    def _catch_up(self, reconcile_wiki: bool) -> None:
        if self.reindex_marker.exists():
            log.warning("finishing an interrupted reindex")
            self.startup_report = self.reindex()
        elif reconcile_wiki:
            self.startup_report = reconcile(self.wiki)
        if self.startup_report is not None and self.startup_report.changed:
            reclaim_space(self.writer, None)  # what indexing freed goes back to the filesystem
        for warning in self.startup_report.warnings if self.startup_report else []:
            log.warning("wiki: %s", warning)
        if not self.unsettled:
            release_heap()  # what comparing every file with the index needed at once

    def settle(self) -> None:
        """What a start with ``settle=False`` left: commit to git what a crash left
        uncommitted (``git status`` over the whole wiki, with loading git itself, ~0.1 s
        of CPU at 10,000 pages), compile the hook sanitizer (~0.05 s) unless an event
        did, and hand back to the system the memory the check needed (a full collection:
        ~0.04 s before the server's imports are frozen)."""
        if not self.unsettled:
            return
        self.unsettled = False
        _ = self.sanitizer
        if self.recover_later:
            try:
                self.checkpointer.recover()
            except Exception:  # the files are safe on disk; the next start looks again
                log.exception("git recovery of uncommitted changes failed")
        release_heap()

    def stop(self) -> None:
        """Drain accepted writes first, then write the last checkpoint."""
        if hasattr(self, "retrieval"):
            self.retrieval.stop()
        if self.watcher is not None:
            self.watcher.stop()
        self.writer.stop()
        self.checkpointer.stop()
        self.readers.close()
        release_wal(self.config.db_path)  # every connection is closed: the WAL can go


class EarlyStart:
    """:meth:`Runtime.start` on a thread of its own, begun before the server's imports.

    The start-up check (listing, stat'ing and comparing every page file with the
    index) is mostly system calls and SQLite, which run beside the imports on a second
    core. Nothing is served before :meth:`take` returns, so nothing reads an index the
    check has not finished with. :meth:`discard` stops a runtime nobody took, when
    the server fails before its lifespan starts.
    """

    def __init__(self, start: Callable[[], Runtime]) -> None:
        self._start = start
        self._result: Future[Runtime] = Future()
        self._taken = False
        threading.Thread(target=self._run, name="ai-memory-start", daemon=True).start()

    def _run(self) -> None:
        try:
            self._result.set_result(self._start())
        except BaseException as exc:  # handed to whoever takes the runtime
            self._result.set_exception(exc)

    def take(self) -> Runtime:
        """The started runtime (waiting for it), or the error that stopped its start."""
        self._taken = True
        return self._result.result()

    def discard(self) -> None:
        """Stop the runtime if the server never took it; its start's error is dropped."""
        if self._taken:
            return
        self._taken = True
        try:
            runtime = self._result.result()
        except BaseException:
            return
        runtime.stop()
