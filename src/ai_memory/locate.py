"""Where a data dir, its server and its token are, for every command that needs them.

Standard library only: the hook client and the MCP bridge import this on every run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:49374"


def data_dir(explicit: str | Path | None, env: Mapping[str, str]) -> Path:
    """``--data-dir``, else ``AI_MEMORY_DATA_DIR``, else the XDG default; absolute, canonical."""
    chosen: Path
    if explicit:
        chosen = Path(explicit)
    elif env.get("AI_MEMORY_DATA_DIR"):
        chosen = Path(env["AI_MEMORY_DATA_DIR"])
    elif env.get("XDG_DATA_HOME"):
        chosen = Path(env["XDG_DATA_HOME"]) / "ai-memory"
    else:
        chosen = Path(env.get("HOME") or str(Path.home())) / ".local" / "share" / "ai-memory"
    return chosen.expanduser().resolve()


def server_url(explicit: str | None, root: Path, env: Mapping[str, str]) -> str:
    """``--server``, else ``AI_MEMORY_SERVER_URL``, else ``server.url`` in config.toml."""
    if explicit:
        return explicit
    if env.get("AI_MEMORY_SERVER_URL"):
        return env["AI_MEMORY_SERVER_URL"]
    import tomllib  # only when no variable names the server: it is slow to import

    try:
        config = tomllib.loads((root / "config.toml").read_text(encoding="utf-8"))
        url = config.get("server", {}).get("url")
    except (OSError, ValueError, AttributeError):
        url = None
    return url if isinstance(url, str) and url else DEFAULT_URL


def token(root: Path, env: Mapping[str, str]) -> str | None:
    """``AI_MEMORY_AUTH_TOKEN``, else the data dir's root token."""
    if env.get("AI_MEMORY_AUTH_TOKEN"):
        return env["AI_MEMORY_AUTH_TOKEN"]
    try:
        return (root / "auth-tokens" / "default").read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
