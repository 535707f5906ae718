"""A progress bar for long lifecycle commands: drawn on a terminal, silent otherwise."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console

Advance = Callable[[int, int], None]


@contextmanager
def progress_bar(console: Console, label: str) -> Iterator[Advance]:
    """Yields ``advance(done, total)``. Refreshed by the calls themselves, not by a thread
    of its own, so a command may still fork worker processes while it is shown."""
    if not console.is_terminal:
        yield lambda done, total: None
        return
    from rich.progress import Progress

    with Progress(console=console, transient=True, auto_refresh=False) as progress:
        task = progress.add_task(label, total=None)

        def advance(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total, refresh=True)

        yield advance
