"""Writing an agent's MCP configuration: idempotent, foreign entries kept, backed up.

The token is never written: the stdio bridge reads it from the data dir, and
the HTTP form references the ``AI_MEMORY_AUTH_TOKEN`` environment variable in
each client's own syntax.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ai_memory.core.errors import ConfigError, InvalidInput
from ai_memory.dotfiles import write_config

Client = Literal["claude-code", "codex", "gemini", "cursor", "opencode"]
Transport = Literal["bridge", "http"]
CLIENTS: tuple[str, ...] = ("claude-code", "codex", "gemini", "cursor", "opencode")
NAME = "ai-memory"
TOKEN_ENV = "AI_MEMORY_AUTH_TOKEN"


@dataclass(frozen=True, slots=True)
class Launch:
    """How the client should start the bridge, and where the server is."""

    command: list[str]
    url: str

    @property
    def mcp_url(self) -> str:
        return self.url.rstrip("/") + "/mcp"


@dataclass(frozen=True, slots=True)
class Plan:
    client: str
    path: Path
    before: str | None
    after: str

    @property
    def changed(self) -> bool:
        return self.before != self.after


def check_client(client: str) -> str:
    if client not in CLIENTS:
        raise InvalidInput(f"unknown client {client!r}; use one of {', '.join(CLIENTS)}")
    return client


def config_path(client: str, home: Path) -> Path:
    return {
        "claude-code": home / ".claude.json",
        "codex": home / ".codex" / "config.toml",
        "gemini": home / ".gemini" / "settings.json",
        "cursor": home / ".cursor" / "mcp.json",
        "opencode": home / ".config" / "opencode" / "opencode.json",
    }[check_client(client)]


def plan(client: str, transport: Transport, launch: Launch, path: Path) -> Plan:
    check_client(client)
    before = path.read_text(encoding="utf-8") if path.exists() else None
    if client == "codex":
        after = _codex(before or "", transport, launch, path)
    else:
        entry = _ENTRIES[client](transport, launch)
        after = _json_merge(before, _JSON_KEYS[client], entry, path)
    return Plan(client, path, before, after)


def apply(change: Plan) -> Path | None:
    """Write the plan; return the backup of the previous file, if there was one."""
    if not change.changed:
        return None
    return write_config(change.path, change.after)


# -- JSON clients ----------------------------------------------------------------


def _claude(transport: Transport, launch: Launch) -> dict[str, Any]:
    if transport == "http":
        header = f"Bearer ${{{TOKEN_ENV}}}"
        return {"type": "http", "url": launch.mcp_url, "headers": {"Authorization": header}}
    return {"type": "stdio", "command": launch.command[0], "args": launch.command[1:], "env": {}}


def _gemini(transport: Transport, launch: Launch) -> dict[str, Any]:
    if transport == "http":
        header = f"Bearer ${TOKEN_ENV}"
        return {"httpUrl": launch.mcp_url, "headers": {"Authorization": header}}
    return {"command": launch.command[0], "args": launch.command[1:]}


def _cursor(transport: Transport, launch: Launch) -> dict[str, Any]:
    if transport == "http":
        header = f"Bearer ${{env:{TOKEN_ENV}}}"
        return {"url": launch.mcp_url, "headers": {"Authorization": header}}
    return {"command": launch.command[0], "args": launch.command[1:]}


def _opencode(transport: Transport, launch: Launch) -> dict[str, Any]:
    if transport == "http":
        header = f"Bearer {{env:{TOKEN_ENV}}}"
        return {"type": "remote", "url": launch.mcp_url, "headers": {"Authorization": header}}
    return {"type": "local", "command": list(launch.command), "enabled": True}


_ENTRIES: dict[str, Callable[[Transport, Launch], dict[str, Any]]] = {
    "claude-code": _claude,
    "gemini": _gemini,
    "cursor": _cursor,
    "opencode": _opencode,
}
_JSON_KEYS = {
    "claude-code": "mcpServers",
    "gemini": "mcpServers",
    "cursor": "mcpServers",
    "opencode": "mcp",
}


def _json_merge(before: str | None, key: str, entry: dict[str, Any], path: Path) -> str:
    data: Any = {}
    if before is not None and before.strip():
        try:
            data = json.loads(before)
        except ValueError as exc:
            raise ConfigError(f"{path} is not valid JSON ({exc}); fix it first") from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path} does not hold a JSON object; fix it first")
    servers = data.setdefault(key, {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: {key!r} is not an object; fix it first")
    if servers.get(NAME) == entry and before is not None:
        return before
    servers[NAME] = entry
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# -- Codex (TOML) ------------------------------------------------------------------

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")


def _codex(before: str, transport: Transport, launch: Launch, path: Path) -> str:
    _parse_toml(before, path)
    kept = _without_our_tables(before).rstrip("\n")
    block = _codex_block(transport, launch)
    after = (kept + "\n\n" if kept else "") + block
    parsed = _parse_toml(after, path)
    servers = parsed.get("mcp_servers", {})
    if not isinstance(servers, dict) or NAME not in servers:
        raise ConfigError(f"{path}: could not place [mcp_servers.{NAME}]; edit it by hand")
    return before if _same_toml(before, after) else after


def _codex_block(transport: Transport, launch: Launch) -> str:
    lines = [f"[mcp_servers.{NAME}]"]
    if transport == "http":
        lines += [
            f"url = {json.dumps(launch.mcp_url)}",
            f"bearer_token_env_var = {json.dumps(TOKEN_ENV)}",
        ]
    else:
        lines += [
            f"command = {json.dumps(launch.command[0])}",
            f"args = {json.dumps(launch.command[1:])}",
        ]
    return "\n".join(lines) + "\n"


def _without_our_tables(text: str) -> str:
    out: list[str] = []
    skipping = False
    for line in text.splitlines(keepends=True):
        header = _HEADER.match(line)
        if header:
            skipping = _is_ours(header.group(1))
        if not skipping:
            out.append(line)
    return "".join(out)


def _is_ours(key: str) -> bool:
    parts = [p.strip().strip('"').strip("'") for p in key.split(".")]
    return parts[:2] == ["mcp_servers", NAME]


def _parse_toml(text: str, path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not valid TOML ({exc}); fix it first") from exc


def _same_toml(before: str, after: str) -> bool:
    return bool(before) and tomllib.loads(before) == tomllib.loads(after)
