"""Every secret of the corpus, through every captured surface, and then nowhere on disk.

The corpus (tests/secrets_corpus.py) goes through each hook event kind and
field (single events and batches), REST and MCP handoffs, and the hook client's
spool while the server is down; the sessions are ended so pages and automatic
handoffs get written and the handoffs are delivered; then the SQLite files,
the wiki, its git history and the spool are searched for every secret.
"""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ai_memory.hookclient.main import run
from ai_memory.hookclient.redact import redact
from ai_memory.hooks.sanitize import REDACTED, Sanitizer
from tests.conftest import ServerProcess, free_port, run_cli
from tests.hooks_support import hook_env, make_checkout
from tests.mcp_support import connect, data
from tests.secrets_corpus import CORPUS

PROJECT = {"workspace": "default", "project": "corpus"}
Body = Callable[[str], tuple[str, dict[str, Any]]]

# Each captured surface: the agent's event and a payload carrying the text there.
SURFACES: dict[str, Body] = {
    "prompt": lambda t: ("UserPromptSubmit", {"prompt": f"please deploy with {t}"}),
    "tool-command": lambda t: (
        "PostToolUse",
        {"tool_name": "Bash", "tool_input": {"command": t}, "tool_response": "ok"},
    ),
    "tool-input-json": lambda t: (
        "PreToolUse",
        {"tool_name": "Write", "tool_input": {"file_path": "cfg.env", "content": t}},
    ),
    "tool-output": lambda t: (
        "PostToolUse",
        {"tool_name": "Bash", "tool_input": {"command": "env"}, "tool_response": {"stdout": t}},
    ),
    "tool-output-escaped": lambda t: (
        "PostToolUse",
        {
            "tool_name": "Read",
            "tool_input": {"file_path": "x.json"},
            "tool_response": json.dumps({"content": json.dumps({"text": t})}),
        },
    ),
    "tool-name": lambda t: ("PostToolUse", {"tool_name": t, "tool_input": {"a": 1}}),
    "file-path": lambda t: (
        "PostToolUse",
        {"tool_name": "Edit", "tool_input": {"file_path": f"/srv/app/{t}", "new_string": "x"}},
    ),
    "patch-file": lambda t: (
        "PostToolUse",
        {
            "tool_name": "apply_patch",
            "tool_input": {"command": f"*** Begin Patch\n*** Update File: {t}\n"},
        },
    ),
    "cwd": lambda t: ("UserPromptSubmit", {"prompt": "work", "cwd": f"/home/dev/{t}"}),
    "stop": lambda t: ("Stop", {"last_assistant_message": f"Done. I used {t}."}),
    "notification": lambda t: ("Notification", {"message": f"Claude needs {t}"}),
    "pre-compact": lambda t: ("PreCompact", {"custom_instructions": t}),
    "post-compact": lambda t: ("PostCompact", {"compact_summary": f"so far: {t}"}),
    "session-start-reason": lambda t: ("SessionStart", {"source": t}),
    "other-meta": lambda t: ("SubagentStart", {"details": {"token": t, "note": t}}),
}


def _params(event: str, session: str) -> dict[str, str]:
    return {**PROJECT, "agent": "claude-code", "event": event, "session_id": session}


def _leaks(haystack: str) -> list[str]:
    """The corpus formats whose secret (or a 12-character end of it) is in ``haystack``."""
    lowered = haystack.lower()
    return [
        name
        for name, _, needle in CORPUS
        if any(part.lower() in lowered for part in (needle, needle[:12], needle[-12:]))
    ]


def _on_disk(data_dir: Path) -> str:
    parts: list[str] = []
    db = data_dir / "db"
    for path in sorted(db.glob("memory.sqlite*")):
        parts.append(path.read_bytes().decode("utf-8", errors="replace"))
    for folder in (data_dir / "wiki", data_dir / "spool"):
        for path in sorted(folder.rglob("*")):
            if path.is_file() and ".git" not in path.parts:
                parts.append(path.read_bytes().decode("utf-8", errors="replace"))
                parts.append(str(path))
    history = subprocess.run(
        ["git", "-C", str(data_dir / "wiki"), "log", "-p", "--all", "--stat"],
        capture_output=True,
        check=True,
    )
    assert history.stdout.count(b"commit ") > 1
    parts.append(history.stdout.decode("utf-8", errors="replace"))
    return "\n".join(parts)


def test_the_corpus_has_60_unique_formats_and_both_engines_redact_each() -> None:
    assert len(CORPUS) >= 60
    assert len({name for name, _, _ in CORPUS}) == len(CORPUS)
    assert len({needle for _, _, needle in CORPUS}) == len(CORPUS)
    sanitizer = Sanitizer()
    for name, text, needle in CORPUS:
        assert needle in text, name
        for shown in (text, json.dumps({"k": text}), json.dumps(json.dumps({"k": text}))):
            for cleaned in (sanitizer.clean(shown, 16 * 1024), redact(shown)):
                assert not _leaks(cleaned), (name, cleaned)
                assert REDACTED in cleaned


def _send_hooks(server: ServerProcess) -> list[str]:
    """Every surface, a batch each (the prompt one event by event); the session ids used."""
    sessions: list[str] = []
    with server.client() as client:
        for surface, build in SURFACES.items():
            session = f"corpus-{surface}"
            sessions.append(session)
            items = []
            for _, text, _ in CORPUS:
                event, body = build(text)
                items.append({"params": _params(event, session), "body": body})
            if surface == "prompt":
                for item in items:
                    answer = client.post("/hook", params=item["params"], json=item["body"])
                    assert answer.status_code == 202, answer.text
                continue
            answer = client.post("/hook/batch", json=items)
            assert answer.status_code == 200, answer.text
            assert {r["status"] for r in answer.json()["results"]} == {202}, surface
        # A session id holding a secret (in the payload) and an event name holding one.
        for index, (_, text, _) in enumerate(CORPUS):
            params = {**PROJECT, "agent": "claude-code", "event": "UserPromptSubmit"}
            body = {"session_id": text, "prompt": f"work {index}"}
            assert client.post("/hook", params=params, json=body).status_code == 202
            if len(text) <= 200:
                odd = {**params, "event": text, "session_id": "corpus-event"}
                assert client.post("/hook", params=odd, json={"x": 1}).status_code in (202, 400)
    return sessions


def _send_handoffs(server: ServerProcess) -> None:
    with server.client() as client:
        for _, text, _ in CORPUS:
            body: dict[str, Any] = {
                **PROJECT,
                "summary": f"Half done; the key is {text}"[:4000],
                "next_steps": [f"rotate {text}"],
                "open_questions": [text],
                "content": {"notes": text, "password": "plain-value-1", "nested": [{"k": text}]},
                "agent": "codex",
                "cwd": f"/home/dev/{text}"[:4096],
            }
            if len(text) <= 100:
                body["session_id"] = text
            answer = client.post("/api/v1/handoffs", json=body)
            assert answer.status_code == 201, answer.text
            assert not _leaks(answer.text)
        # Claimed by an agent and a session whose names hold secrets: stored replaced.
        for _, text, _ in CORPUS:
            if len(text) <= 64:
                claim = {**PROJECT, "agent": text, "session_id": text}
                answer = client.post("/api/v1/handoffs/accept", json=claim)
                assert answer.status_code == 200, answer.text
                assert not _leaks(answer.text)

    async def through_mcp() -> None:
        async with connect(server) as mcp:
            for _, text, _ in CORPUS:
                result = await mcp.call_tool(
                    "memory_handoff_begin",
                    {
                        **PROJECT,
                        "summary": f"Stopped at {text}"[:4000],
                        "open_questions": [text[:2000]],
                        "next_steps": [text[:2000]],
                        "files_touched": [text[:2000]],
                        "shared": [text[:2000]],
                    },
                )
                assert not _leaks(json.dumps(data(result)))

    asyncio.run(through_mcp())


def _spool_while_down(server: ServerProcess, tmp_path: Path) -> None:
    checkout = make_checkout(tmp_path / "shop")
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    for index, (_, text, _) in enumerate(CORPUS):
        payload = {
            "session_id": text if index % 2 else f"spooled-{index}",
            "cwd": str(checkout),
            "hook_event_name": "PostToolUse",
            "prompt": text,
            "tool_name": "Bash",
            "tool_input": {"command": text, "password": f"pw-{index}-x", "env": {"X": text}},
            "tool_response": {"stdout": json.dumps({"out": text})},
        }
        out = io.StringIO()
        stdin = io.BytesIO(json.dumps(payload).encode())
        assert run(["--agent", "claude-code"], stdin=stdin, stdout=out, env=dead) == 0
    # A missed session start leaves a marker named after the session: never the secret.
    for _, text, _ in CORPUS[:8]:
        start = {"session_id": text, "cwd": str(checkout), "hook_event_name": "SessionStart"}
        stdin = io.BytesIO(json.dumps(start).encode())
        assert run(["--agent", "claude-code"], stdin=stdin, stdout=io.StringIO(), env=dead) == 0
    markers = list((server.data_dir / "spool" / "handoff-undelivered").iterdir())
    assert len(markers) == 8 and not _leaks(" ".join(m.name for m in markers))
    spooled = list((server.data_dir / "spool").glob("*.json"))
    assert len(spooled) == len(CORPUS) + 8
    assert not _leaks("\n".join(p.read_text() for p in spooled))
    live = hook_env(server.data_dir, server.url)
    drained = run_cli("hook-drain", data_dir=server.data_dir, env=live)
    assert drained.returncode == 0, drained.stderr
    assert not list((server.data_dir / "spool").glob("*.json"))


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_no_secret_of_the_corpus_reaches_the_database_the_wiki_its_history_or_the_spool(
    server: ServerProcess, tmp_path: Path
) -> None:
    sessions = _send_hooks(server)
    _send_handoffs(server)
    _spool_while_down(server, tmp_path)
    with server.client(timeout=300) as client:
        for session in sessions:
            end = client.post("/hook", params=_params("SessionEnd", session), json={})
            assert end.status_code == 202
        for index in range(len(CORPUS)):
            params = {**PROJECT, "agent": "claude-code", "event": "SessionEnd"}
            body = {"session_id": CORPUS[index][1]}
            assert client.post("/hook", params=params, json=body).status_code == 202
        flushed = client.post("/api/v1/sessions/flush", params={"timeout": 240})
        assert flushed.json()["pending"] == 0
        pages = client.get("/api/v1/sessions", params={**PROJECT, "limit": 200}).json()
        assert len(pages["sessions"]) >= len(SURFACES)
        # The handoffs are delivered in session-start packets: none carries a secret.
        packets = []
        for index in range(12):
            query = {**PROJECT, "agent": "gemini", "session_id": f"next-{index}", "cwd": "/"}
            packet = client.get("/handoff", params=query)
            assert packet.status_code == 200, packet.text
            packets.append(packet.text)
        assert any('"handoff":{' in p or '"handoff": {' in p for p in packets)
        assert not _leaks("\n".join(packets))
    written = list((server.data_dir / "wiki").rglob("sessions/*.md"))
    assert len(written) >= len(SURFACES)
    assert sum(p.name.startswith("s-") for p in written) >= len(CORPUS) // 2  # derived ids
    disk = _on_disk(server.data_dir)
    assert "please deploy with" in disk and "Half done; the key is" in disk
    assert disk.count(REDACTED) > 10 * len(CORPUS)
    assert _leaks(disk) == []
