"""Picking up edits made to the wiki by hand (an editor, Obsidian, ``git pull``).

The watcher re-derives each changed file through the writer. The server's own
writes need no special casing: by the time the watcher's command runs, the
write that produced the event has committed, its content hash matches the
index, and the command does nothing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from pathlib import Path

import watchfiles

from ai_memory.wiki.reindex import indexed_under, reconcile_paths
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
                watch_filter=lambda change, path: _visible(root, path),
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
        root = self.wiki.root
        touched: set[str] = set()
        for path in map(Path, paths):
            relative = path.relative_to(root).as_posix()
            if relative.endswith(".md"):
                touched.add(relative)
                continue
            if path.is_dir():
                touched.update(
                    f.relative_to(root).as_posix() for f in path.rglob("*.md") if _visible(root, f)
                )
            touched.update(indexed_under(self.wiki, relative))
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


def _visible(root: Path, path: str | Path) -> bool:
    """Not inside a hidden folder of the wiki (``.git``, ``.obsidian``, temp files)."""
    try:
        parts = Path(path).relative_to(root).parts
    except ValueError:
        return False
    return bool(parts) and not any(part.startswith(".") for part in parts)
