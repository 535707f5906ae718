"""Picking up edits made to the wiki by hand (an editor, Obsidian, ``git pull``).

The watcher re-derives each changed file through the writer. The server's own
writes are told apart by content, not by who made them: by the time the watcher
looks, the write that produced the event has committed, the file hashes to what
the index holds, and nothing more is done for it. That check is what each event
costs, so it is kept small: the writer stages its temp files outside the wiki, so
a page it writes makes one event (the rename); a string test drops the events of
hidden files (``.git``, an editor's swap files); and the index is read once for a
whole batch of events (``reconcile_paths``), not once per file.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path

import watchfiles

from ai_memory.wiki.indexed import indexed_under
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
        visible = _visible_under(root)
        try:
            for changes in watchfiles.watch(
                root,
                watch_filter=lambda change, path: visible(path),
                debounce=self.debounce_ms,
                stop_event=self._stop,
                raise_interrupt=False,
            ):
                self._apply(self._pages_touched(path for _, path in changes))
        except Exception:
            log.exception("wiki watcher stopped")

    def _pages_touched(self, paths: Iterable[str]) -> list[str]:
        """Page files named by the events; a folder event (a rename, a move, a removal)
        stands for every page on disk or in the index beneath it."""
        cut = len(str(self.wiki.root)) + 1
        touched: set[str] = set()
        for path in paths:
            relative = path[cut:].replace(os.sep, "/")
            if relative.endswith(".md"):
                touched.add(relative)
                continue
            folder = Path(path)
            if folder.is_dir():
                visible = _visible_under(self.wiki.root)
                touched.update(
                    f.relative_to(self.wiki.root).as_posix()
                    for f in folder.rglob("*.md")
                    if visible(str(f))
                )
            touched.update(self.wiki.readers.read(partial(indexed_under, folder=relative)))
        return sorted(touched)

    def _apply(self, relpaths: list[str]) -> None:
        if not relpaths:
            return
        try:
            report = reconcile_paths(self.wiki, relpaths)
        except Exception:
            log.exception("could not index edited pages %s", relpaths[:5])
            return
        for warning in report.warnings:
            log.warning("wiki: %s", warning)
        if report.changed:
            log.info("indexed %d page(s) edited outside ai-memory", report.changed)


def _visible_under(root: Path) -> Callable[[str], bool]:
    """A test of a path the watcher reports: beneath ``root`` and not inside a hidden
    folder of the wiki nor a hidden file (``.git``, ``.obsidian``, temp files). String
    tests only: it runs for every event."""
    head = str(root) + os.sep
    hidden = os.sep + "."
    cut = len(head)

    def visible(path: str) -> bool:
        return (
            path.startswith(head)
            and len(path) > cut
            and path[cut] != "."
            and hidden not in path[cut:]
        )

    return visible
