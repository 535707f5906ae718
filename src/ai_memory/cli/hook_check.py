"""Setup's hook self-check: a real event through the command the agent will run, read back.

It proves what matters: the installed command line (its ``--server`` and
``--data-dir``) reaches the server the MCP bridge uses. The event goes to the
reserved ``scratch`` project, so no project of the user's gets a session.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from ai_memory.cli import hook_install
from ai_memory.cli.client import ApiClient
from ai_memory.core.errors import Unavailable

PROJECT = "scratch"
PROMPT_EVENTS = {
    "claude-code": "UserPromptSubmit",
    "codex": "UserPromptSubmit",
    "gemini": "BeforeAgent",
    "cursor": "beforeSubmitPrompt",
    "opencode": "chat.message",
}


def installed_command(agent: str, settings: Path, home_command: str) -> str:
    """The prompt hook's command line as written in the agent's settings (or plugin)."""
    if agent in hook_install.PLUGIN_AGENTS:
        return home_command
    data = hook_install.load(settings)
    event = PROMPT_EVENTS[agent]
    for entry in (data.get("hooks") or {}).get(event) or []:
        handlers = entry.get("hooks") if isinstance(entry, dict) and "hooks" in entry else [entry]
        for handler in handlers or []:
            if hook_install.is_own(handler):
                return str(handler["command"])
    raise Unavailable(f"{settings} holds no ai-memory hook for {event}; run install-hooks again")


def check_hook(
    agent: str, command: str, client: ApiClient, spool: Path, timeout: float = 20.0
) -> str:
    """Run ``command`` as the agent would, then read the event back; return its session id.

    Raise :class:`Unavailable` saying where the event went when it did not arrive.
    """
    session_id = f"setup-check-{secrets.token_hex(4)}"
    prompt = f"ai-memory setup check for {agent}"
    with tempfile.TemporaryDirectory(prefix="ai-memory-check-") as folder:
        Path(folder, ".ai-memory.toml").write_text(f'project = "{PROJECT}"\n', encoding="utf-8")
        payload = _payload(agent, session_id, folder, prompt)
        try:
            subprocess.run(
                ["sh", "-c", command],
                input=json.dumps(payload).encode(),
                capture_output=True,
                cwd=folder,
                timeout=timeout,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise Unavailable(f"the installed hook command did not run: {exc}") from exc
    if not _arrived(client, session_id, prompt):
        waiting = len(list(spool.glob("*.json"))) if spool.is_dir() else 0
        raise Unavailable(
            f"a test event sent through the installed hook did not reach {client.base_url}"
            f" ({waiting} event(s) wait in {spool}; see logs/hook.log). "
            "Check the hook's --server and --data-dir, then run setup again."
        )
    return session_id


def _payload(agent: str, session_id: str, cwd: str, prompt: str) -> dict[str, Any]:
    event = PROMPT_EVENTS[agent]
    return {"hook_event_name": event, "session_id": session_id, "cwd": cwd, "prompt": prompt}


def _arrived(client: ApiClient, session_id: str, prompt: str) -> bool:
    try:
        answer = client.request(
            "GET", f"/api/v1/sessions/{session_id}/observations", params={"project": PROJECT}
        )
    except Exception:
        return False
    bodies = [o.get("body") for o in answer.get("observations", [])]
    return prompt in bodies


def codex_trusted(home: Path, hooks_file: Path) -> bool:
    """True when Codex's config records a trust decision for a hook of ``hooks_file``."""
    import tomllib

    config = home / ".codex" / "config.toml"
    try:
        data = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    state = (data.get("hooks") or {}).get("state") or {}
    prefix = str(hooks_file) + ":"
    return any(
        key.startswith(prefix) and isinstance(value, dict) and value.get("trusted_hash")
        for key, value in state.items()
    )
