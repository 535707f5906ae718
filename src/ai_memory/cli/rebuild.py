"""``ai-memory reindex``: the command, run through Typer or straight from the entry point.

A reindex is a whole process that users time, and for a thousand notes its own
work is about a second: loading Typer, Click, Rich and every other command's
module would add a fifth to it. So the entry point runs it directly when its
arguments are the ones it takes (none, or ``--data-dir DIR``); anything else
(``--help``, a typo) goes through Typer like every command. Off a terminal it
prints plain lines (no progress bar, nothing for Rich to do); on one it draws
through the Rich consoles as the other commands do.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from ai_memory.cli.literal import visible
from ai_memory.core.errors import AiMemoryError

if TYPE_CHECKING:
    from ai_memory.wiki.reindex import ReconcileReport

OPTION = "--data-dir"


def direct_data_dir(argv: list[str]) -> tuple[bool, Path | None]:
    """Whether ``argv`` (after ``reindex``) is one the direct run takes, and its data dir."""
    if not argv:
        return True, None
    if len(argv) == 2 and argv[0] == OPTION and argv[1] and not argv[1].startswith("-"):
        return True, Path(argv[1])
    if len(argv) == 1 and argv[0].startswith(f"{OPTION}=") and len(argv[0]) > len(OPTION) + 1:
        return True, Path(argv[0].split("=", 1)[1])
    return False, None


def run_direct(argv: list[str]) -> int | None:
    """The exit status of a direct run, or None to leave ``argv`` to Typer."""
    takes, data_dir = direct_data_dir(argv)
    if not takes:
        return None
    try:
        reindex(data_dir)
    except AiMemoryError as exc:
        if _terminal():
            from ai_memory.cli.output import err, styled

            err.print(styled("error:", "red"), exc.message)
        else:
            sys.stderr.write(f"error: {visible(exc.message)}\n")
        return 1
    return 0


def exit_now(status: int) -> NoReturn:
    """End the process of a direct run without tearing the interpreter down.

    Everything the run opened is closed by then (the writer, readers, workers and the
    server lock); what is left is freeing every module and object one by one, ~0.05 s
    of CPU for nothing. The output is flushed first, and logging's handlers too."""
    import logging

    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # the reader of the output went away: say so by the status
        status = status or 1
    logging.shutdown()
    os._exit(status)


def reindex(data_dir: Path | None) -> None:
    """Rebuild the index from the markdown files (refused while a server runs)."""
    from ai_memory.config import Config
    from ai_memory.maintenance.modes import private_umask
    from ai_memory.maintenance.reindex import reindex as rebuild

    private_umask()
    config = Config.load(data_dir, os.environ)
    started = time.perf_counter()
    if _terminal():
        from ai_memory.cli.output import err, out, styled
        from ai_memory.cli.progress import progress_bar

        with progress_bar(err, "reindexing") as advance:
            report = rebuild(config, advance)
        summary = _summary(report, time.perf_counter() - started)
        for warning in report.warnings:
            err.print(styled("warning:", "yellow"), warning)
        out.print(summary, soft_wrap=True)
        return
    report = rebuild(config)
    summary = _summary(report, time.perf_counter() - started)
    sys.stderr.writelines(f"warning: {visible(warning)}\n" for warning in report.warnings)
    sys.stdout.write(summary + "\n")


def _summary(report: ReconcileReport, elapsed: float) -> str:
    return (
        f"reindexed {report.files} files: {report.added} added, {report.updated} updated, "
        f"{report.deleted} removed, {report.unchanged} unchanged "
        f"in {elapsed:.2f} s ({report.files / max(elapsed, 1e-9):,.0f} files/s)"
    )


def _terminal() -> bool:
    return sys.stdout.isatty() or sys.stderr.isatty()
