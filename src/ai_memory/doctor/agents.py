"""Checks of each detected agent's config: our hooks and MCP entry, aimed at this data dir.

An agent is detected when its config folder exists under the (injectable) home
dir; an agent that is not installed is not a problem.
"""

from __future__ import annotations

import json
import shlex
import tomllib
from pathlib import Path
from typing import Any

from ai_memory import locate
from ai_memory.cli import hook_install
from ai_memory.core.errors import AiMemoryError
from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, error, ok
from ai_memory.mcp.install import CLIENTS, NAME, config_path

GONE = "which no longer exists (ai-memory moved or was removed)"

AGENT_DIRS = {
    "claude-code": (".claude",),
    "codex": (".codex",),
    "gemini": (".gemini",),
    "cursor": (".cursor",),
    "opencode": (".config", "opencode"),
}


def detected(home: Path) -> list[str]:
    return [agent for agent, parts in AGENT_DIRS.items() if home.joinpath(*parts).is_dir()]


def check_hooks(ctx: DoctorContext) -> list[Finding]:
    found: list[Finding] = []
    for agent in detected(ctx.home):
        if agent not in hook_install.AGENT_HOOKS:
            continue
        fix = f"ai-memory install-hooks --agent {agent} {ctx.dir_arg} --apply"
        path = hook_install.settings_path(agent, ctx.home)
        try:
            settings = hook_install.load(path)
        except AiMemoryError as exc:  # a broken file is a finding, not a crash
            found.append(error(f"hooks:{agent}", str(exc), f"$EDITOR {path}"))
            continue
        commands = _own_commands(settings)
        missing = [e for e in hook_install.AGENT_HOOKS[agent].events if e not in commands]
        wrong = sorted({d for cmds in commands.values() for c in cmds if (d := _dir_of(c, ctx))})
        gone = sorted({g for cmds in commands.values() for c in cmds if (g := _gone(c))})
        if gone:
            # A vanished entry file makes Python exit 2, which Claude Code and Gemini CLI
            # take as "block this prompt": the most urgent finding of all.
            found.append(error(f"hooks:{agent}", f"{path}: hooks run {gone[0]}, {GONE}", fix))
        elif missing:
            what = ", ".join(missing)
            found.append(error(f"hooks:{agent}", f"{path} has no ai-memory hook for {what}", fix))
        elif wrong:
            found.append(
                error(f"hooks:{agent}", f"{path}: hooks point at {wrong[0]}, not here", fix)
            )
        else:
            found.append(ok(f"hooks:{agent}", f"{path}: every event is captured"))
    return found


def check_mcp(ctx: DoctorContext) -> list[Finding]:
    found: list[Finding] = []
    for client in detected(ctx.home):
        if client not in CLIENTS:
            continue
        path = config_path(client, ctx.home)
        fix = f"ai-memory install-mcp --client {client} {ctx.dir_arg} --apply"
        entry = _mcp_entry(client, path)
        if entry is None:
            found.append(error(f"mcp:{client}", f"{path} has no {NAME} MCP server", fix))
            continue
        problem = _entry_problem(entry, ctx)
        if problem:
            found.append(error(f"mcp:{client}", f"{path}: the {NAME} entry {problem}", fix))
        else:
            found.append(ok(f"mcp:{client}", f"{path}: {NAME} is configured"))
    return found


def _own_commands(settings: dict[str, Any]) -> dict[str, list[str]]:
    hooks = settings.get("hooks")
    result: dict[str, list[str]] = {}
    if not isinstance(hooks, dict):
        return result
    for event, groups in hooks.items():
        for group in groups if isinstance(groups, list) else []:
            handlers = group.get("hooks") if isinstance(group, dict) else None
            for handler in handlers if isinstance(handlers, list) else []:
                if hook_install.is_own(handler):
                    result.setdefault(event, []).append(str(handler["command"]))
    return result


def _dir_of(words: list[str] | str, ctx: DoctorContext) -> str | None:
    """The data dir (or server) a command line names when it is not this one, else None."""
    try:
        argv = shlex.split(words) if isinstance(words, str) else list(words)
    except ValueError:
        return "an unparsable command"
    named = argv[argv.index("--data-dir") + 1] if "--data-dir" in argv[:-1] else None
    chosen = locate.data_dir(named, ctx.env)
    if chosen != ctx.data_dir:
        return str(chosen)
    server = argv[argv.index("--server") + 1] if "--server" in argv[:-1] else None
    if server is not None and server.rstrip("/") != ctx.server_url:
        return server  # this data dir, but a server that is not where it listens
    return None


def _gone(words: list[str] | str) -> str | None:
    """The program or entry file a command line runs when it no longer exists, else None."""
    try:
        argv = shlex.split(words) if isinstance(words, str) else list(words)
    except ValueError:
        return None  # reported by _dir_of
    launched = [word for word in argv[:1] if "/" in word]  # a bare name is looked up on PATH
    launched += [word for word in argv[1:] if word.endswith("agent_entry.py")]
    return next((word for word in launched if not Path(word).exists()), None)


def _mcp_entry(client: str, path: Path) -> dict[str, Any] | None:
    if not path.exists():
        return None
    try:
        text = path.read_text(encoding="utf-8")
        data = tomllib.loads(text) if client == "codex" else json.loads(text or "{}")
    except (ValueError, UnicodeDecodeError):
        return None
    key = "mcp_servers" if client == "codex" else "mcp" if client == "opencode" else "mcpServers"
    servers = data.get(key) if isinstance(data, dict) else None
    entry = servers.get(NAME) if isinstance(servers, dict) else None
    return entry if isinstance(entry, dict) else None


def _entry_problem(entry: dict[str, Any], ctx: DoctorContext) -> str | None:
    url = entry.get("url") or entry.get("httpUrl")
    if isinstance(url, str):
        wanted = f"{ctx.server_url}/mcp"
        return None if url.rstrip("/") == wanted else f"points at {url}, not {wanted}"
    command = entry.get("command")
    argv = command if isinstance(command, list) else [command, *(entry.get("args") or [])]
    argv = [str(word) for word in argv if word is not None]
    if "mcp-bridge" not in argv:
        return "does not start `ai-memory mcp-bridge`"
    if gone := _gone(argv):
        return f"runs {gone}, {GONE}"
    other = _dir_of(argv, ctx)
    return f"uses the data dir {other}, not {ctx.data_dir}" if other else None
