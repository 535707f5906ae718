"""Editing an agent's hook settings: add ours, keep every foreign entry, stay idempotent."""

from __future__ import annotations

import copy
import json
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ai_memory import agent_entry
from ai_memory.cli.hook_plugins import OPENCODE_PLUGIN
from ai_memory.core.errors import InvalidInput
from ai_memory.dotfiles import write_config

# Our program name (or entry file), possibly closed by the quote around its path, then
# ``hook --agent``.
_OWN = re.compile(r"(?:ai-memory|ai_memory|agent_entry\.py)['\"]?\s+hook\s+--agent\s")


@dataclass(frozen=True, slots=True)
class AgentHooks:
    settings: tuple[str, ...]  # path below $HOME
    events: tuple[str, ...]
    timeout: int  # in the unit the agent expects
    # Events whose limit is lower than ``timeout`` (Codex clamps SessionEnd to 3 s).
    limits: Mapping[str, int] = field(default_factory=dict)
    # "groups": Claude Code's {"matcher", "hooks": [...]}; "flat": Cursor's [{"command"}].
    shape: str = "groups"


AGENT_HOOKS: Mapping[str, AgentHooks] = {
    "claude-code": AgentHooks(
        (".claude", "settings.json"),
        (
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "PostToolUseFailure",
            "PreCompact",
            "PostCompact",
            "Notification",
            "Stop",
            "SubagentStart",
            "SubagentStop",
            "SessionEnd",
        ),
        10,
        # SessionEnd hooks share a 1.5 s budget: ours must not ask for more.
        {"SessionEnd": 2},
    ),
    "codex": AgentHooks(
        (".codex", "hooks.json"),
        (
            "SessionStart",
            "UserPromptSubmit",
            "PostToolUse",
            "PreCompact",
            "PostCompact",
            "Stop",
            "SubagentStart",
            "SubagentStop",
            "SessionEnd",
        ),
        10,
        {"SessionEnd": 3},
    ),
    "gemini": AgentHooks(
        (".gemini", "settings.json"),
        (
            "SessionStart",
            "BeforeAgent",
            "AfterAgent",
            "AfterTool",
            "PreCompress",
            "Notification",
            "SessionEnd",
        ),
        5000,
    ),
    "cursor": AgentHooks(
        (".cursor", "hooks.json"),
        (
            "sessionStart",
            "beforeSubmitPrompt",
            "afterShellExecution",
            "afterMCPExecution",
            "afterFileEdit",
            "afterAgentResponse",
            "stop",
            "sessionEnd",
        ),
        10,
        shape="flat",
    ),
}
# Agents whose hooks are a plugin we generate whole, not entries in a settings file.
PLUGIN_AGENTS: Mapping[str, tuple[str, ...]] = {
    "opencode": (".config", "opencode", "plugins", "ai-memory.js"),
}


def settings_path(agent: str, home: Path) -> Path:
    if agent in PLUGIN_AGENTS:
        return home.joinpath(*PLUGIN_AGENTS[agent])
    return home.joinpath(*_spec(agent).settings)


def default_program() -> str:
    """The installed ``ai-memory`` next to this Python, else the one on PATH."""
    program = Path(sys.executable).with_name("ai-memory")
    return str(program) if program.exists() else shutil.which("ai-memory") or "ai-memory"


def hook_argv(program: str | None = None) -> list[str]:
    """What runs ``hook``: ``program hook`` when given, else this Python on the entry file.

    ``python -I -S …/agent_entry.py hook`` skips site processing, ``.pth`` imports, the
    console-script shim and the CLI: a run starts almost as fast as a bare interpreter.
    """
    if program:
        return [program, "hook"]
    if sys.executable:
        return agent_entry.command("hook")
    return [default_program(), "hook"]


def warm_hook_client() -> None:
    """Fill the hook client's pattern cache, so the first event after install is quick too."""
    from ai_memory.hookclient import fastre
    from ai_memory.hookclient.patterns import SECRETS, SENSITIVE_KEY

    fastre.warm([s.re_pattern or s.pattern for s in SECRETS] + [SENSITIVE_KEY])


def hook_command(
    agent: str,
    event: str,
    data_dir: Path | None,
    program: str | None = None,
    server: str | None = None,
) -> str:
    """The shell command line an agent runs (agents run it through ``sh -c``).

    ``--data-dir`` and ``--server`` are written into it, so a server on another port or
    data dir gets every event (the hook never guesses them from the agent's environment).
    """
    base = shlex.join(hook_argv(program))
    command = f"{base} --agent {shlex.quote(agent)} --event {event}"
    if data_dir is not None:
        command += f" --data-dir {shlex.quote(str(data_dir))}"
    if server:
        command += f" --server {shlex.quote(server)}"
    return command


def plugin_source(
    agent: str, data_dir: Path | None, program: str | None = None, server: str | None = None
) -> str:
    """The whole plugin file for an agent whose hooks are code (OpenCode)."""
    if agent not in PLUGIN_AGENTS:
        raise InvalidInput(f"agent {agent!r} takes no plugin")
    argv = [*hook_argv(program), "--agent", agent]
    if data_dir is not None:
        argv += ["--data-dir", str(data_dir)]
    if server:
        argv += ["--server", server]
    return OPENCODE_PLUGIN.replace("__ARGV__", json.dumps(argv))


def trust_note(agent: str) -> str | None:
    """What the user must still do for the agent to run the hooks just written."""
    if agent == "codex":
        return (
            "Codex runs a new hook only once you have reviewed it: start `codex`, type /hooks "
            "and trust each ai-memory entry (a hook you edit later needs trusting again). "
            "Until then Codex records nothing; automation can pass "
            "--dangerously-bypass-hook-trust to `codex exec`."
        )
    return None


def is_own(entry: object) -> bool:
    return isinstance(entry, dict) and bool(_OWN.search(str(entry.get("command", ""))))


def install(
    settings: dict[str, Any],
    agent: str,
    data_dir: Path | None = None,
    program: str | None = None,
    server: str | None = None,
) -> dict[str, Any]:
    """``settings`` with our hook on every event worth capturing, each exactly once."""
    spec = _spec(agent)
    result = copy.deepcopy(settings)
    if spec.shape == "flat":
        result.setdefault("version", 1)
    hooks = result.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise InvalidInput("the settings file's 'hooks' is not an object; fix it by hand first")
    for event in spec.events:
        command = hook_command(agent, event, data_dir, program, server)
        timeout = spec.limits.get(event, spec.timeout)
        groups = hooks.setdefault(event, [])
        if not isinstance(groups, list):
            raise InvalidInput(f"hooks.{event} is not a list; fix it by hand first")
        handler = {"type": "command", "command": command, "timeout": timeout}
        if spec.shape == "flat":
            handler = {"command": command, "timeout": timeout}
            own = [h for h in groups if is_own(h)]
            if own == [handler]:
                continue
            groups[:] = [h for h in groups if not is_own(h)]
            groups.append(handler)
            continue
        own = [h for g in groups if isinstance(g, dict) for h in _handlers(g) if is_own(h)]
        if own == [handler]:
            continue
        _drop_own(groups)
        groups.append({"matcher": "", "hooks": [handler]})
    return result


def uninstall(settings: dict[str, Any], agent: str) -> dict[str, Any]:
    """``settings`` without any of our entries; foreign ones are kept untouched."""
    _spec(agent)
    result = copy.deepcopy(settings)
    hooks = result.get("hooks")
    if not isinstance(hooks, dict):
        return result
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        flat = [h for h in groups if not is_own(h)]
        removed = len(flat) != len(groups)
        groups[:] = flat
        if (_drop_own(groups) or removed) and not groups:
            del hooks[event]
    if not hooks and "hooks" in settings and settings["hooks"] != {}:
        del result["hooks"]
    return result


def load(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"{path} is not valid JSON ({exc}); nothing was changed") from exc
    if not isinstance(data, dict):
        raise InvalidInput(f"{path} does not hold a JSON object; nothing was changed")
    return data


def render(settings: Mapping[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def save(path: Path, text: str) -> Path | None:
    """Back the old file up beside it, then replace it durably, mode kept; return the backup."""
    return write_config(path, text)


def _spec(agent: str) -> AgentHooks:
    spec = AGENT_HOOKS.get(agent)
    if spec is None:
        raise InvalidInput(f"agent must be one of {', '.join(AGENT_HOOKS)}; got {agent!r}")
    return spec


def _handlers(group: dict[str, Any]) -> list[Any]:
    handlers = group.get("hooks")
    return handlers if isinstance(handlers, list) else []


def _drop_own(groups: list[Any]) -> bool:
    """Remove our handlers (and groups left empty by that) in place; True if any went."""
    removed = False
    for group in list(groups):
        if not isinstance(group, dict):
            continue
        handlers = _handlers(group)
        kept = [h for h in handlers if not is_own(h)]
        if len(kept) != len(handlers):
            removed = True
            if kept:
                group["hooks"] = kept
            else:
                groups.remove(group)
    return removed
