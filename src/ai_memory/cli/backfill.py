"""``ai-memory backfill``: import the past sessions the agents kept on disk.

On a machine signed in with ``ai-memory login`` (or given ``--server``) the import
goes to that server's ``/hook/batch`` with the user's key, so the sessions are that
user's. Otherwise, with no server running, it runs in this process against the data
dir (holding its lock meanwhile); with one running, it goes to that server. Either
way each event takes the live hooks' path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ai_memory.cli.options import DataDir, Json, ServerUrl, client_for, load_config_owning
from ai_memory.cli.output import emit_json, err, out, styled
from ai_memory.core.errors import InvalidInput

if TYPE_CHECKING:
    from ai_memory.config import Config
    from ai_memory.importers.replay import Tally
    from ai_memory.importers.run import Advance

PLAIN_STEPS = 10  # progress lines printed when stderr is not a terminal


def register(app: typer.Typer) -> None:
    app.command("backfill")(backfill)


def backfill(
    agent: Annotated[
        list[str] | None,
        typer.Option(
            "--agent",
            "-a",
            help="Only this agent (repeatable): claude-code, codex, "
            "gemini, opencode. Default: every one.",
        ),
    ] = None,
    project: Annotated[
        str | None, typer.Option("--project", "-p", help="Only sessions of this project.")
    ] = None,
    cwd: Annotated[
        Path | None, typer.Option("--cwd", help="Only sessions run in this directory or below.")
    ] = None,
    since: Annotated[
        str | None, typer.Option("--since", help="Only sessions that ended on or after this date.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count what would be imported; store nothing.")
    ] = False,
    home: Annotated[
        Path | None,
        typer.Option("--home", help="Read the agents' stores under this folder (default: $HOME)."),
    ] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    as_json: Json = False,
) -> None:
    """Import past sessions from the agents' own transcripts (read-only), once each.

    On a machine signed in with ``ai-memory login`` (or given --server) they go to that
    server with your key, as your sessions; otherwise into the data dir here.
    """
    from ai_memory.importers.discover import agent_names
    from ai_memory.importers.replay import Filters
    from ai_memory.importers.run import Source, plan

    try:
        agents = agent_names(agent or [])
    except ValueError as exc:
        raise InvalidInput(str(exc)) from None
    filters = Filters(tuple(agents), project, str(cwd) if cwd else None, _since(since))
    config = load_config_owning(data_dir)
    source = Source(home or Path.home(), os.environ)
    plans, tally = plan(source, filters, agents)
    via = "dry run"
    if not dry_run:
        via = _import(config, server, plans, tally)
    if as_json:
        emit_json({"dry_run": dry_run, "via": via, **tally.to_dict()})
    else:
        _summary(tally, dry_run, via)


def _import(config: Config, server: str | None, plans: Any, tally: Tally) -> str:
    """Through the server named (``--server``) or signed in to (``ai-memory login``), owned by
    that key's user; else in process when the data dir is free, else through its server."""
    from ai_memory.cli.admin_call import names_a_server, require_data_dir
    from ai_memory.core.errors import ServerRunning
    from ai_memory.importers.deliver import HttpSink, LocalSink
    from ai_memory.importers.run import replay
    from ai_memory.maintenance.lock import ServerLock
    from ai_memory.runtime import Runtime

    def served() -> str:
        with _progress(len(plans)) as advance:
            replay(plans, HttpSink(client_for(config, server)), tally, advance)
        return "server"

    if names_a_server(server):
        return served()
    require_data_dir(config, "backfill")
    lock = ServerLock(config.data_dir, operation="backfill")
    try:
        lock.acquire()
    except ServerRunning:
        return served()
    try:
        runtime = Runtime.start(config, embed=False, search=False)
        try:
            with _progress(len(plans)) as advance:
                replay(plans, LocalSink(runtime), tally, advance)
        finally:
            runtime.stop()
    finally:
        lock.release()
    return "data dir"


@contextmanager
def _progress(total: int) -> Iterator[Advance]:
    """A bar on a terminal; otherwise a line per tenth, so a log shows the import moving."""
    from ai_memory.cli.progress import progress_bar

    if err.is_terminal:
        with progress_bar(err, "importing sessions") as advance:
            yield advance
        return
    step = max(1, total // PLAIN_STEPS)

    def plain(done: int, total: int) -> None:
        if done % step == 0 or done == total:
            err.print(f"imported {done}/{total} sessions", highlight=False)

    yield plain


def _since(value: str | None) -> str | None:
    from ai_memory.importers.lines import iso_time

    if value is None:
        return None
    found = iso_time(value)
    if found is None:
        raise InvalidInput(f"--since {value!r} is not a date (give e.g. 2026-11-01)")
    return found


def _summary(tally: Tally, dry_run: bool, via: str) -> None:
    verb = "would import" if dry_run else f"imported ({via})"
    out.print(
        f"{verb} {tally.sessions} session(s), {tally.events} event(s); "
        f"{tally.skipped_lines} unreadable line(s) skipped",
        highlight=False,
    )
    for name, row in sorted(tally.projects.items()):
        out.print(f"  {name}: {row['sessions']} session(s), {row['events']} event(s)")
    if via == "server":
        out.print(
            f"the server took {tally.accepted} event(s) (each stored once), "
            f"{tally.rejected} rejected",
            highlight=False,
        )
    elif not dry_run:
        out.print(
            f"stored {tally.stored} event(s), {tally.duplicates} already stored, "
            f"{tally.rejected} rejected",
            highlight=False,
        )
    if tally.dropped:
        out.print(f"{tally.dropped} event(s) dropped by the [ingest] lists")
    if tally.not_captured:
        out.print(f"{tally.not_captured} session(s) left out: their checkout's capture is off")
    if tally.no_directory:
        out.print(f"{tally.no_directory} session(s) without a directory left out")
    for unreadable in tally.unreadable:
        err.print(styled("unreadable:", "yellow"), f"{unreadable.source}: {unreadable.reason}")
    for error in tally.errors[:20]:
        err.print(styled("rejected:", "yellow"), error)
