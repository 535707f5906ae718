"""Helpers for the capture policy tests: checkouts with a policy, events, and the trace grep."""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from ai_memory.cli import hook_install
from ai_memory.hookclient.drain import drain
from tests.conftest import ServerProcess
from tests.hooks_support import hook_env, run_hook

PROJECT = "policy"


def policy_checkout(root: Path, capture: str, project: str = PROJECT) -> Path:
    """A checkout whose marker names the project and holds ``capture`` as its [capture]."""
    root.mkdir(parents=True)
    (root / ".ai-memory.toml").write_text(f'project = "{project}"\n\n[capture]\n{capture}\n')
    return root


def event(session: str, cwd: Path, name: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(cwd), "hook_event_name": name, **fields}


def read_tool(session: str, cwd: Path, path: str, content: str, **extra: Any) -> dict[str, Any]:
    return event(
        session,
        cwd,
        "PostToolUse",
        tool_name="Read",
        tool_input={"file_path": path},
        tool_response={"content": content},
        **extra,
    )


def run_all(
    events: list[dict[str, Any]], env: dict[str, str], cwd: Path, agent: str = "claude-code"
) -> list[dict[str, Any]]:
    """Each event through the real hook command; every run exits 0."""
    outputs = []
    for payload in events:
        code, out = run_hook(agent, payload["hook_event_name"], payload, env, cwd)
        assert code == 0
        outputs.append(out)
    return outputs


def run_stderr(payload: dict[str, Any], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """One run of the real hook command; (exit code, stdout, stderr)."""
    proc = subprocess.run(
        [
            *hook_install.hook_argv(),
            "--agent",
            "claude-code",
            "--event",
            payload["hook_event_name"],
        ],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=env,
        cwd=cwd,
        timeout=60,
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def traces(text: str, data_dir: Path) -> list[str]:
    """Every place under the data dir holding ``text``: spool, logs, the SQLite file and its
    WAL, the wiki's files, the server's log; and the wiki's whole ``git log -p``."""
    needle = text.encode()
    found = [
        str(path.relative_to(data_dir))
        for path in sorted(data_dir.rglob("*"))
        if path.is_file() and needle in path.read_bytes()
    ]
    wiki = data_dir / "wiki"
    if (wiki / ".git").exists():
        log = subprocess.run(
            ["git", "-C", str(wiki), "log", "-p", "--all"], capture_output=True, check=True
        )
        if needle in log.stdout:
            found.append("git log -p")
    return found


def observations(data_dir: Path, project: str = PROJECT) -> list[tuple[str, str | None, str]]:
    """``(kind, tool_name, body)`` of every stored observation of the project, oldest first."""
    db = data_dir / "db" / "memory.sqlite"
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = conn.execute(
            "SELECT kind, tool_name, body FROM observations WHERE project = ? ORDER BY id",
            (project,),
        ).fetchall()
    finally:
        conn.close()
    return [(str(kind), tool, str(body)) for kind, tool, body in rows]


def session_page(server: ServerProcess, session: str, project: str = PROJECT) -> str:
    """The session's page body, once every ended session has its page.

    What a run on a loaded machine could not post in time is still spooled: delivered first.
    """
    drain(server.data_dir, server.url, server.token, timeout_s=30)
    with server.client() as client:
        client.post("/api/v1/sessions/flush", params={"timeout": 30})
        answer = client.get(f"/api/v1/projects/default/{project}/pages/sessions/{session}.md")
    assert answer.status_code == 200, answer.text
    body: str = answer.json()["body"]
    return body


def env_for(server: ServerProcess, xdg: Path, **extra: str) -> dict[str, str]:
    """The hook's environment: this data dir and server, a user config folder of the test's."""
    return hook_env(server.data_dir, server.url, XDG_CONFIG_HOME=str(xdg), **extra)
