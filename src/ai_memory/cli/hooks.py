"""Commands of capture: install-hooks, uninstall-hooks, hook-drain, finalize-session."""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Annotated

import typer

from ai_memory.cli import hook_install
from ai_memory.cli.options import (
    DataDir,
    Project,
    ServerUrl,
    Workspace,
    client_for,
    load_config,
    scope_for,
)
from ai_memory.cli.output import out, styled
from ai_memory.core.errors import InvalidInput, Unavailable

Agent = Annotated[
    str, typer.Option("--agent", "-a", help="claude-code, codex, gemini, cursor or opencode.")
]
Apply = Annotated[bool, typer.Option("--apply", help="Write the change (default: only show it).")]
Settings = Annotated[
    Path | None,
    typer.Option("--settings", help="Settings file to edit (default: the agent's user file)."),
]


def register(app: typer.Typer) -> None:
    app.command(
        "hook",
        context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
        add_help_option=False,
    )(hook)
    app.command("install-hooks")(install_hooks)
    app.command("uninstall-hooks")(uninstall_hooks)
    app.command("hook-drain")(hook_drain)
    app.command("finalize-session")(finalize_session)


def hook(ctx: typer.Context) -> None:
    """What agents run on each event: read its JSON on stdin, capture it, print the context.

    Options: --agent AGENT, --event EVENT, --data-dir DIR, --server URL (see `hook --help`).
    """
    from ai_memory.hookclient.main import run

    raise typer.Exit(run(list(ctx.args)))


def install_hooks(
    agent: Agent,
    apply: Apply = False,
    settings: Settings = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Add ai-memory's hooks to an agent's settings, keeping every other entry."""
    if apply:
        hook_install.warm_hook_client()
    if agent in hook_install.PLUGIN_AGENTS:
        _install_plugin(agent, apply, settings, data_dir, server)
        return
    path = settings or hook_install.settings_path(agent, _home())
    current = hook_install.load(path)
    folder = data_dir.resolve() if data_dir else None
    changed = hook_install.install(current, agent, folder, server=server)
    _apply_change(path, current, changed, apply)
    note = hook_install.trust_note(agent)
    if note is not None and apply:
        out.print(styled("action needed:", "yellow"), note, highlight=False)


def _install_plugin(
    agent: str, apply: bool, settings: Path | None, data_dir: Path | None, server: str | None
) -> None:
    """Agents whose hooks are a plugin file we generate whole (OpenCode)."""
    path = settings or hook_install.settings_path(agent, _home())
    before = path.read_text(encoding="utf-8") if path.exists() else ""
    folder = data_dir.resolve() if data_dir else None
    after = hook_install.plugin_source(agent, folder, server=server)
    if before == after:
        out.print(f"{path}: already up to date, nothing to change")
        return
    if not apply:
        out.print(f"would write {path}:", highlight=False)
        out.print(after, end="", highlight=False, markup=False)
        out.print("run again with --apply to write this change")
        return
    hook_install.save(path, after)
    out.print(f"wrote {path}")


def uninstall_hooks(
    agent: Agent, apply: Apply = False, settings: Settings = None, data_dir: DataDir = None
) -> None:
    """Remove ai-memory's hooks (only its own) from an agent's settings."""
    path = settings or hook_install.settings_path(agent, _home())
    if agent in hook_install.PLUGIN_AGENTS:
        if not path.exists():
            out.print(f"{path}: not installed, nothing to change")
        elif not apply:
            out.print(f"would remove {path}; run again with --apply to remove it")
        else:
            path.unlink()
            out.print(f"removed {path}")
        return
    current = hook_install.load(path)
    _apply_change(path, current, hook_install.uninstall(current, agent), apply)


def hook_drain(
    data_dir: DataDir = None,
    server: ServerUrl = None,
    timeout: Annotated[float, typer.Option(help="Give up after this many seconds.")] = 60.0,
    as_current_key: Annotated[
        bool,
        typer.Option(
            "--as-current-key",
            help="Deliver events captured with another key or token too, with the current "
            "credential: they become the current key's user's.",
        ),
    ] = False,
    discard_other_keys: Annotated[
        bool,
        typer.Option(
            "--discard-other-keys",
            help="Set events captured with another key or token aside in spool/rejected/.",
        ),
    ] = False,
) -> None:
    """Deliver every hook event still waiting in the local spool."""
    from ai_memory import locate
    from ai_memory.cli import spool_keys
    from ai_memory.hookclient.drain import drain

    if as_current_key and discard_other_keys:
        raise InvalidInput("pass --as-current-key or --discard-other-keys, not both")
    config = load_config(data_dir)
    url = locate.server_url(server, config.data_dir, os.environ)
    token = locate.token(config.data_dir, os.environ)
    if as_current_key:
        moved = spool_keys.adopt(config.data_dir, token)
        out.print(f"{moved} event(s) captured with another key or token now go with this one")
    if discard_other_keys:
        moved = spool_keys.set_aside(config.data_dir, token)
        out.print(f"set aside {moved} event(s) captured with another key or token")
    batch = min(256, config.hooks.queue_size)
    report = drain(config.data_dir, url, token, timeout_s=timeout, batch=batch)
    if not report.reachable and report.remaining:
        raise Unavailable(
            f"cannot reach the server at {url}; {report.remaining} event(s) stay spooled"
        )
    summary = f"delivered {report.delivered} event(s)"
    if report.rejected:
        summary += f"; {report.rejected} refused as invalid (set aside in spool/rejected/)"
    if report.others:
        summary += (
            f"; {report.others} captured with another key or token stay spooled for it"
            " (they are never delivered as yours: `hook-drain --as-current-key` delivers"
            " them as this key's user's, `--discard-other-keys` sets them aside)"
        )
    if report.remaining > report.others:
        stuck = report.remaining - report.others
        raise Unavailable(
            f"{summary}; {stuck} event(s) could not be delivered and stay spooled"
            " (see logs/hook.log)"
        )
    out.print(summary if report.others else f"{summary}; nothing left in the spool")


def finalize_session(
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="End this agent's newest open session.")
    ] = None,
    session_id: Annotated[str | None, typer.Option(help="End this session.")] = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    workspace: Workspace = None,
    project: Project = None,
) -> None:
    """End a session now, for agents without a reliable session-end hook."""
    scope = scope_for(workspace, project)
    payload = {"workspace": scope.workspace, "project": scope.project}
    if agent:
        payload["agent"] = agent
    if session_id:
        payload["session_id"] = session_id
    client = client_for(load_config(data_dir), server)
    result = client.request("POST", "/api/v1/sessions/finalize", json=payload)
    page = result.get("page")
    written = f"page {page}" if page else "no session page (nothing worth a page was captured)"
    out.print(f"ended session {result['session_id']}; {written}")


def _apply_change(
    path: Path, current: dict[str, object], changed: dict[str, object], apply: bool
) -> None:
    before = hook_install.render(current) if path.exists() else ""
    after = hook_install.render(changed)
    if before == after:
        out.print(f"{path}: already up to date, nothing to change")
        return
    if not apply:
        diff = difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=str(path),
            tofile=f"{path} (with --apply)",
        )
        out.print("".join(diff), end="", highlight=False, markup=False)
        out.print("run again with --apply to write this change")
        return
    backup = hook_install.save(path, after)
    if backup is not None:
        out.print(f"backed up {path} to {backup}")
    out.print(f"wrote {path}")


def _home() -> Path:
    return Path(os.environ.get("HOME") or Path.home())
