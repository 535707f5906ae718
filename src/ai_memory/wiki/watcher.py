"""Picking up edits made to the wiki by hand (an editor, Obsidian, ``git pull``).

The watcher re-derives each changed file through the writer. The server's own
writes need no special casing: by the time the watcher's command runs, the
write that produced the event has committed, its content hash matches the
index, and the command does nothing.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import watchfiles

from ai_memory.wiki.reindex import reconcile_paths
from ai_memory.wiki.wiki import Wiki

log = logging.getLogger(__name__)


class WikiWatcher:
    def __init__(self, wiki: Wiki, debounce_ms: int = 300) -> None:
        self.wiki = wiki
        self.debounce_ms = debounce_ms
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="ai-memory-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        root = self.wiki.root
        try:
            for changes in watchfiles.watch(
                root,
                watch_filter=_is_page,
                debounce=self.debounce_ms,
                stop_event=self._stop,
                raise_interrupt=False,
            ):
                relpaths = sorted({Path(path).relative_to(root).as_posix() for _, path in changes})
                self._apply(relpaths)
        except Exception:
            log.exception("wiki watcher stopped")

    def _apply(self, relpaths: list[str]) -> None:
        try:
            report = reconcile_paths(self.wiki, relpaths)
        except Exception:
            log.exception("could not index edited pages %s", relpaths[:5])
            return
        for warning in report.warnings:
            log.warning("wiki: %s", warning)
        if report.changed:
            log.info("indexed %d page(s) edited outside ai-memory", report.changed)


def _is_page(change: watchfiles.Change, path: str) -> bool:
    return path.endswith(".md") and "/." not in path
