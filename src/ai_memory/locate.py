"""Where a data dir, its server and its token are, for every command that needs them.

Standard library only: the hook client and the MCP bridge import this on every run,
so it works on plain string paths (``pathlib`` and ``tomllib`` are slow to import);
:func:`data_dir` gives the CLI and server a ``Path``.
"""

from __future__ import annotations

from ai_memory.hookclient import fs

TYPE_CHECKING = False
if TYPE_CHECKING:
    import os
    from collections.abc import Mapping
    from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:49374"


def data_dir(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> Path:
    """``--data-dir``, else ``AI_MEMORY_DATA_DIR``, else the XDG default; absolute, canonical."""
    from pathlib import Path

    return Path(data_folder(explicit, env))


def data_folder(explicit: str | os.PathLike[str] | None, env: Mapping[str, str]) -> str:
    """:func:`data_dir` as a string."""
    chosen: str
    if explicit:
        chosen = fs.fspath(explicit)
    elif env.get("AI_MEMORY_DATA_DIR"):
        chosen = env["AI_MEMORY_DATA_DIR"]
    elif env.get("XDG_DATA_HOME"):
        chosen = fs.join(env["XDG_DATA_HOME"], "ai-memory")
    else:
        home = env.get("HOME") or fs.expanduser("~")
        chosen = fs.join(home, ".local", "share", "ai-memory")
    return fs.realpath(fs.expanduser(chosen))


def server_url(explicit: str | None, root: str | os.PathLike[str], env: Mapping[str, str]) -> str:
    """``--server``, else ``AI_MEMORY_SERVER_URL``, else the signed-in server of client.toml,
    else ``server.url`` in config.toml."""
    if explicit:
        return explicit
    if env.get("AI_MEMORY_SERVER_URL"):
        return env["AI_MEMORY_SERVER_URL"]
    signed_in = credential(env)
    if signed_in is not None and signed_in[0]:
        return signed_in[0]
    try:
        with open(fs.join(root, "config.toml"), encoding="utf-8") as handle:
            url = configured_url(handle.read())
    except (OSError, ValueError):
        url = None
    return url if isinstance(url, str) and url else DEFAULT_URL


def configured_url(text: str) -> object:
    """``server.url`` of a config.toml's text; ``tomllib`` only for a file that is not plain."""
    from ai_memory.hookclient.plain_toml import strings

    plain = strings(text, "server")
    if plain is not None:
        return plain.get("url")
    import tomllib

    try:
        return tomllib.loads(text).get("server", {}).get("url")
    except (ValueError, AttributeError):
        return None


def token(root: str | os.PathLike[str], env: Mapping[str, str]) -> str | None:
    """``AI_MEMORY_AUTH_TOKEN``, else the key ``ai-memory login`` stored, else the root token."""
    if env.get("AI_MEMORY_AUTH_TOKEN"):
        return env["AI_MEMORY_AUTH_TOKEN"]
    signed_in = credential(env)
    if signed_in is not None and signed_in[1]:
        return signed_in[1]
    try:
        with open(fs.join(root, "auth-tokens", "default"), encoding="utf-8") as handle:
            return handle.read().strip() or None
    except (OSError, ValueError):
        return None


CLIENT_FILE = ("ai-memory", "client.toml")


def client_file(env: Mapping[str, str]) -> str:
    """``$XDG_CONFIG_HOME/ai-memory/client.toml``, else ``~/.config/ai-memory/client.toml``."""
    config = env.get("XDG_CONFIG_HOME") or ""
    if not fs.isabs(config):
        config = fs.join(env.get("HOME") or fs.expanduser("~"), ".config")
    return fs.join(config, *CLIENT_FILE)


def credential(env: Mapping[str, str]) -> tuple[str, str] | None:
    """The (server URL, API key) ``ai-memory login`` stored; None when signed out.

    An empty string stands for a value the file does not hold.
    """
    try:
        with open(client_file(env), encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, ValueError):
        return None
    from ai_memory.hookclient.plain_toml import strings

    table = strings(text, "client")
    if table is None:
        table = _toml_table(text)
    server, key = table.get("server", ""), table.get("key", "")
    return (server, key) if server or key else None


def _toml_table(text: str) -> dict[str, str]:
    import tomllib

    try:
        found = tomllib.loads(text).get("client", {})
    except ValueError:
        return {}
    if not isinstance(found, dict):
        return {}
    return {k: v for k, v in found.items() if isinstance(k, str) and isinstance(v, str)}
