"""``ai-memory login`` / ``logout``: this machine's user credential for a shared server.

``login`` checks the key with the server, then stores the server URL and the key
in ``$XDG_CONFIG_HOME/ai-memory/client.toml`` (0600, written atomically). The hook
client, the MCP bridge and the client commands use it in preference to a local
data dir's root token (``AI_MEMORY_AUTH_TOKEN`` still wins), so the hooks and MCP
entries installed before need no change.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated

import typer

from ai_memory.cli.output import err, out, styled
from ai_memory.core.errors import InvalidInput, Unauthorized

HEADER = "# Written by `ai-memory login`; `ai-memory logout` removes it. Keep it private.\n"


def register(app: typer.Typer) -> None:
    app.command("login")(login)
    app.command("logout")(logout)


def login(
    server: Annotated[str, typer.Option("--server", help="The shared server's URL.")],
    key_stdin: Annotated[
        bool, typer.Option("--key-stdin", help="Read the API key from standard input.")
    ] = False,
) -> None:
    """Sign this machine in to a shared server with a user's API key."""
    from ai_memory import locate
    from ai_memory.cli.client import ApiClient

    url = _checked_url(server)
    key = _read_key(key_stdin)
    client = ApiClient(url, key)
    try:
        me = client.request("GET", "/api/v1/whoami")
    except Unauthorized:
        raise Unauthorized(
            f"{url} refused the key: it is revoked, its user is disabled, or it is another "
            "server's key; nothing was stored"
        ) from None
    finally:
        client.close()
    path = Path(locate.client_file(os.environ))
    write_credential(path, url, key)
    out.print(f"signed in to {url} as {me['user']}; credential stored in {path}")
    winning = overriding(os.environ)
    if not winning:
        out.print("hooks, the MCP bridge and ai-memory commands on this machine now use it")
        return
    names = ", ".join(winning)
    err.print(
        styled("warning:", "yellow"),
        f"this environment sets {names}, which take precedence over the stored credential: "
        "hooks, the MCP bridge and commands run with them do not use this key; unset "
        f"{names} (in your shell's startup files and agent settings too) to use it",
    )


OVERRIDES = ("AI_MEMORY_AUTH_TOKEN", "AI_MEMORY_SERVER_URL")


def overriding(env: Mapping[str, str]) -> list[str]:
    """The variables set here that win over client.toml (names only: never their values)."""
    return [name for name in OVERRIDES if env.get(name)]


def logout() -> None:
    """Forget the credential ``login`` stored; the local root token applies again."""
    from ai_memory import locate

    path = Path(locate.client_file(os.environ))
    try:
        path.unlink()
    except FileNotFoundError:
        out.print(f"not signed in ({path} does not exist)")
        return
    out.print(f"signed out: removed {path}")


def _checked_url(server: str) -> str:
    url = server.strip().rstrip("/")
    plain = all(c.isprintable() and c not in "\"'\\ " for c in url)
    if not url.startswith(("http://", "https://")) or not plain or len(url) > 2000:
        raise InvalidInput("--server must be an http:// or https:// URL")
    return url


def _read_key(from_stdin: bool) -> str:
    """The key from stdin, else a hidden prompt on a terminal; never echoed back."""
    from ai_memory.core.apikeys import parse_prefix

    if from_stdin:
        given = sys.stdin.readline().strip()
    elif sys.stdin.isatty():
        import getpass

        given = getpass.getpass("API key: ").strip()
    else:
        raise InvalidInput("pass the API key on standard input with --key-stdin")
    if parse_prefix(given) is None:
        raise InvalidInput("that is not an ai-memory API key (aim_<prefix>_<secret>)")
    return given


def write_credential(path: Path, url: str, key: str) -> None:
    """``path`` holding the server and key: 0600 from its first byte, replaced atomically."""
    from ai_memory.maintenance.modes import write_private
    from ai_memory.store.files import fsync_dir

    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temp.unlink(missing_ok=True)
    try:
        write_private(temp, f'{HEADER}[client]\nserver = "{url}"\nkey = "{key}"\n')
        with open(temp, "rb") as handle:
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)
