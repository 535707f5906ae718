"""``install-mcp``, ``setup`` and ``mcp-bridge``: connecting agents to memory over MCP."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, cast

import typer

from ai_memory.cli.options import DataDir, ServerUrl, load_config
from ai_memory.cli.output import err, out, styled
from ai_memory.core.errors import InvalidInput

if TYPE_CHECKING:
    from ai_memory.config import Config

ClientName = Annotated[
    str,
    typer.Option("--client", "--agent", help="claude-code, codex, gemini, cursor or opencode."),
]
TransportOption = Annotated[
    str,
    typer.Option(
        help="bridge: the agent launches `ai-memory mcp-bridge` (passes the session and "
        "launch directory, keeps the token out of the file); http: direct, token from "
        "$AI_MEMORY_AUTH_TOKEN."
    ),
]
ConfigFile = Annotated[
    Path | None, typer.Option("--config-file", help="Write this file instead of the default.")
]


def register(app: typer.Typer) -> None:
    app.command("install-mcp")(install_mcp)
    app.command("setup")(setup)
    app.command("mcp-bridge")(mcp_bridge)


def bridge_command(data_dir: Path | None, server: str | None) -> list[str]:
    """How an agent starts the bridge: this Python, isolated (``-I -S``), on the entry file.

    It skips site processing, the console-script shim and the CLI, so the bridge
    answers ``initialize`` soon after it is spawned.
    """
    from ai_memory import agent_entry

    command = agent_entry.command("mcp-bridge")
    if data_dir is not None:
        command += ["--data-dir", str(data_dir.expanduser().resolve())]
    if server:
        command += ["--server", server]
    return command


def install_mcp(
    client: ClientName,
    apply: Annotated[bool, typer.Option("--apply", help="Write the file (default: show).")] = False,
    transport: TransportOption = "bridge",
    config_file: ConfigFile = None,
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Add ai-memory to an agent's MCP configuration (idempotent, keeps other servers)."""
    from ai_memory.mcp.install import Launch, Transport, config_path, plan
    from ai_memory.mcp.install import apply as write

    if transport not in ("bridge", "http"):
        raise InvalidInput(f"--transport must be bridge or http, not {transport!r}")
    config = load_config(data_dir)
    launch = Launch(bridge_command(data_dir, server), server or config.server.url)
    path = config_path(client, Path.home()) if config_file is None else config_file
    change = plan(client, cast(Transport, transport), launch, path)
    if not change.changed:
        out.print(f"{path}: ai-memory is already configured for {client}; nothing to do.")
        return
    if not apply:
        out.print(f"would write {path}:", highlight=False)
        sys.stdout.write(change.after)
        out.print("run again with --apply to write it.")
        return
    backup = write(change)
    out.print(styled("configured", "green"), f"{client} in {path}")
    if backup is not None:
        out.print(f"  previous file kept as {backup}", highlight=False)
    if transport == "http":
        out.print("  the client reads the token from $AI_MEMORY_AUTH_TOKEN", highlight=False)


def setup(
    client: ClientName,
    data_dir: DataDir = None,
    server: ServerUrl = None,
    config_file: ConfigFile = None,
    service: Annotated[
        bool | None,
        typer.Option(
            "--service/--no-service",
            help="Install the always-on service, start it and wait for it "
            "(default: ask when interactive, else no).",
        ),
    ] = None,
) -> None:
    """Init (if needed), install hooks and MCP for one agent, then check it all works.

    On a machine signed in with ``ai-memory login`` (and no ``--data-dir``/``--server``)
    there is no local server to init or start: the hooks and MCP entry use the stored
    credential, so setup checks the key with the signed-in server instead.
    """
    from ai_memory import locate
    from ai_memory.cli.service import offer_service
    from ai_memory.maintenance.init import initialise
    from ai_memory.mcp.selfcheck import self_check

    config = load_config(data_dir)
    signed_in = None if data_dir or server else locate.credential(os.environ)
    if signed_in is not None and signed_in[0]:
        url = locate.server_url(None, config.data_dir, os.environ)
        _check_sign_in(url, locate.token(config.data_dir, os.environ))
    else:
        for line in initialise(config):
            out.print(f"created {line}", highlight=False)
        url = server or config.server.url
    hooked = _install_hooks(client, data_dir, server)
    install_mcp(client, True, "bridge", config_file, data_dir, server)
    if signed_in is None:
        offer_service(config, service, url)
    result = self_check(url, bridge_command(data_dir, server))
    scope = result.scope
    out.print(
        styled("ok", "green"),
        f"server {result.version} answers; MCP memory_status answered from "
        f"{scope['workspace']}/{scope['project']} ({scope['reason']})",
        highlight=False,
    )
    if hooked:
        _check_hooks(client, config, data_dir, server)


def _check_sign_in(url: str, key: str | None) -> None:
    """Who the stored key signs in as; a refused key stops setup before it writes a file."""
    from ai_memory.cli.client import ApiClient
    from ai_memory.core.errors import Unauthorized, Unavailable
    from ai_memory.doctor.signed_in import key_label

    api = ApiClient(url, key)
    try:
        me = api.request("GET", "/api/v1/whoami")
    except Unavailable:
        raise Unavailable(
            f"cannot reach {url}, the server this machine is signed in to: check the address "
            f"and the network, or sign in to another with `ai-memory login --server URL "
            f"--key-stdin`"
        ) from None
    except Unauthorized:
        raise Unauthorized(
            f"{url} refuses {key_label(key or '')} this machine is signed in with: it is "
            f"revoked, its user is disabled, or it is another server's key; sign in again "
            f"with `ai-memory login --server {url} --key-stdin`"
        ) from None
    finally:
        api.close()
    out.print(styled("ok", "green"), f"signed in to {url} as {me['user']}", highlight=False)


def _install_hooks(client: str, data_dir: Path | None, server: str | None) -> bool:
    """Capture's install-hooks, for the agents it knows; False when there are none."""
    from ai_memory.cli.hook_install import AGENT_HOOKS, PLUGIN_AGENTS
    from ai_memory.cli.hooks import install_hooks

    if client not in AGENT_HOOKS and client not in PLUGIN_AGENTS:
        err.print(styled("note:", "yellow"), f"no hooks to install for {client}; MCP only")
        return False
    install_hooks(client, True, None, data_dir, server)
    return True


def _check_hooks(client: str, config: Config, data_dir: Path | None, server: str | None) -> None:
    """Send a real event through the installed hook command and read it back."""
    from ai_memory.cli import hook_check, hook_install
    from ai_memory.cli.options import client_for

    home = Path(os.environ.get("HOME") or Path.home())
    settings = hook_install.settings_path(client, home)
    folder = data_dir.resolve() if data_dir else None
    plugin_line = hook_install.hook_command(client, "chat.message", folder, None, server)
    command = hook_check.installed_command(client, settings, plugin_line)
    api = client_for(config, server)
    session = hook_check.check_hook(client, command, api, config.data_dir / "spool")
    out.print(
        styled("ok", "green"),
        f"a test event sent through the installed {client} hook reached {api.base_url} "
        f"(session {session}, project {hook_check.PROJECT})",
        highlight=False,
    )
    if client == "codex" and not hook_check.codex_trusted(home, settings):
        err.print(
            styled("not finished:", "yellow"),
            "Codex will not run these hooks until you trust them: start `codex`, type /hooks "
            "and trust each ai-memory entry, then run setup again to check.",
            highlight=False,
        )
        raise typer.Exit(2)


def mcp_bridge(
    data_dir: DataDir = None,
    server: ServerUrl = None,
) -> None:
    """Serve MCP on stdin/stdout, forwarding to the HTTP server (what agents launch)."""
    from ai_memory.mcp.bridge import run

    argv: list[str] = []
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    if server:
        argv += ["--server", server]
    raise typer.Exit(run(argv))
