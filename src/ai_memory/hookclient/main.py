"""``ai-memory hook --agent A --event E``: what agents run on every lifecycle event.

Standard library only, and it never blocks the agent: the event is spooled
first, posted with a short deadline, removed from the spool once the server
acknowledged it; the whole run stays under 200 ms and exits 0 whatever
happens, with errors written to ``<data_dir>/logs/hook.log``.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from ai_memory import locate
from ai_memory.hookclient import spool
from ai_memory.hookclient.resolve import resolve_project
from ai_memory.hookclient.transport import Transport, Unreachable

# Interpreter start and imports take ~40 ms of the 200 ms a run may last; the
# network gets at most this much of the rest.
NETWORK_BUDGET_S = 0.100
RETRY_PER_RUN = 32
FIELD_CAP = 256 * 1024
SESSION_START = frozenset({"session-start", "sessionstart", "session.created"})
SESSION_KEYS = ("session_id", "sessionId", "conversation_id", "conversationId")
_UNSAFE_SESSION = re.compile(r"[^A-Za-z0-9_.-]+")


class Args:
    """The command line; a plain class, since ``dataclasses`` is slow to import."""

    def __init__(self, agent: str = "generic") -> None:
        self.agent = agent
        self.event: str | None = None
        self.data_dir: str | None = None
        self.server: str | None = None


def run(
    argv: list[str],
    *,
    stdin: IO[bytes] | None = None,
    stdout: IO[str] | None = None,
    env: Mapping[str, str] | None = None,
) -> int:
    """Handle one agent event; always return 0 and always print one JSON object."""
    started = time.monotonic()
    env = os.environ if env is None else env
    out = stdout if stdout is not None else sys.stdout
    data_dir: Path | None = None
    answer: dict[str, Any] = {}
    try:
        args = parse_args(argv, env)
        data_dir = locate.data_dir(args.data_dir, env)
        answer = handle(args, data_dir, env, _read_stdin(stdin), started)
    except BaseException as exc:  # the agent must never see a failure
        log_error(data_dir, f"{type(exc).__name__}: {exc}")
    try:
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()
    except (OSError, ValueError):
        pass
    return 0


def parse_args(argv: list[str], env: Mapping[str, str]) -> Args:
    args = Args(agent=env.get("AI_MEMORY_AGENT") or "generic")
    names = {"--agent": "agent", "--event": "event", "--data-dir": "data_dir", "--server": "server"}
    index = 0
    while index < len(argv):
        item = argv[index]
        key, sep, value = item.partition("=")
        if key in names:
            if not sep:
                index += 1
                value = argv[index] if index < len(argv) else ""
            setattr(args, names[key], value or None)
        index += 1
    args.agent = args.agent or "generic"
    return args


def handle(
    args: Args, data_dir: Path, env: Mapping[str, str], raw: bytes, started: float
) -> dict[str, Any]:
    payload = parse_payload(raw)
    cwd = _cwd(payload)
    identity = resolve_project(cwd)
    params = {
        "agent": args.agent,
        "cwd": cwd,
        "workspace": identity.workspace,
        "project": identity.project,
        "ingest_key": spool.new_ingest_key(),
    }
    if args.event:
        params["event"] = args.event
    session_id = _session_id(payload, env)
    if session_id:
        params["session_id"] = session_id
    folder = data_dir / "spool"
    spool.write(folder, params["ingest_key"], {"params": params, "body": payload})
    transport = Transport(
        locate.server_url(args.server, data_dir, env),
        locate.token(data_dir, env),
        started + NETWORK_BUDGET_S,
    )
    try:
        delivered = send_one(transport, folder, params, payload, data_dir)
        answer: dict[str, Any] = {}
        if _is_session_start(args.event, payload):
            answer = session_start_answer(transport, params, args.agent)
        if delivered:
            retry_spooled(transport, folder, RETRY_PER_RUN, data_dir, skip={params["ingest_key"]})
        return answer
    finally:
        transport.close()


def send_one(
    transport: Transport,
    folder: Path,
    params: dict[str, str],
    payload: dict[str, Any],
    data_dir: Path,
) -> bool:
    """Post the event; True when the server has it (202), False when it stays spooled."""
    try:
        status, answer = transport.request("POST", "/hook", params, payload)
    except Unreachable as exc:
        log_error(data_dir, f"event spooled, server unreachable: {exc}")
        return False
    return settle(folder, params["ingest_key"], status, answer, data_dir)


def settle(folder: Path, key: str, status: int, answer: Any, data_dir: Path) -> bool:
    """Act on the server's answer for one spooled event."""
    if status == 202:
        spool.remove(folder, key)
        return True
    if 400 <= status < 500 and status not in (401, 403, 404, 408, 429):
        spool.reject(folder, key)
        log_error(data_dir, f"event {key} refused ({status}): {answer}")
        return True
    log_error(data_dir, f"event {key} kept in the spool ({status}): {answer}")
    return False


def retry_spooled(
    transport: Transport,
    folder: Path,
    limit: int,
    data_dir: Path,
    skip: set[str] | None = None,
) -> tuple[int, int]:
    """Post up to ``limit`` older spooled events in one batch; return (settled, still pending)."""
    keys = spool.pending(folder, limit, frozenset(skip or ()))
    items, sent = [], []
    for key in keys:
        entry = spool.read(folder, key)
        if entry is not None and isinstance(entry.get("params"), dict):
            items.append({"params": entry["params"], "body": entry.get("body") or {}})
            sent.append(key)
    if not items:
        return 0, 0
    try:
        status, answer = transport.request("POST", "/hook/batch", {}, items)
    except Unreachable as exc:
        log_error(data_dir, f"retry failed: {exc}")
        return 0, len(sent)
    if status != 200 or not isinstance(answer, dict):
        log_error(data_dir, f"retry refused ({status}): {answer}")
        return 0, len(sent)
    settled = 0
    for result in answer.get("results") or []:
        index = result.get("index") if isinstance(result, dict) else None
        if isinstance(index, int) and 0 <= index < len(sent):
            status_i = int(result.get("status", 0))
            if settle(folder, sent[index], status_i, result.get("error"), data_dir):
                settled += 1
    return settled, len(sent) - settled


def session_start_answer(
    transport: Transport, params: dict[str, str], agent: str
) -> dict[str, Any]:
    """Fetch the session-start packet and wrap it in the agent's envelope (``{}`` if empty)."""
    query = {k: v for k, v in params.items() if k != "ingest_key" and k != "event"}
    try:
        status, packet = transport.request("GET", "/handoff", query)
    except Unreachable:
        return {}
    if status != 200 or not isinstance(packet, dict):
        return {}
    context = packet.get("context")
    if not isinstance(context, str) or not context:
        return {}
    return envelope(agent, context)


def envelope(agent: str, context: str) -> dict[str, Any]:
    """Claude Code, Codex and Gemini all read ``hookSpecificOutput.additionalContext``."""
    if agent == "cursor":
        return {"additional_context": context}
    return {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": context}}


def parse_payload(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        value = {"raw": raw.decode("utf-8", errors="replace")}
    if not isinstance(value, dict):
        value = {"value": value}
    return shrink(value)


def shrink(payload: dict[str, Any]) -> dict[str, Any]:
    """Huge fields (a whole file in a tool response) are cut at a whitespace before sending."""
    out: dict[str, Any] = {}
    for key, value in payload.items():
        if isinstance(value, str) and len(value) > FIELD_CAP:
            out[key] = _cut(value)
        elif isinstance(value, dict | list) and len(text := json.dumps(value)) > FIELD_CAP:
            out[key] = _cut(text)
        else:
            out[key] = value
    return out


def _cut(text: str) -> str:
    head = text[:FIELD_CAP]
    space = max(head.rfind(" "), head.rfind("\n"))
    return head[:space] if space > 0 else ""


def log_error(data_dir: Path | None, message: str) -> None:
    if data_dir is None:
        return
    try:
        logs = data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        with open(logs / "hook.log", "a", encoding="utf-8") as handle:
            handle.write(f"{stamp} pid={os.getpid()} {message[:2000]}\n")
    except OSError:
        pass


def _read_stdin(stdin: IO[bytes] | None) -> bytes:
    stream: Any = stdin if stdin is not None else getattr(sys.stdin, "buffer", None)
    if stream is None:
        return b""
    try:
        if stream.isatty():
            return b""
    except (AttributeError, ValueError):
        pass
    data = stream.read()
    return data if isinstance(data, bytes) else str(data).encode("utf-8")


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = payload.get("workspace_roots")
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return os.getcwd()


def _session_id(payload: dict[str, Any], env: Mapping[str, str]) -> str | None:
    for key in SESSION_KEYS:
        value = payload.get(key)
        if isinstance(value, str | int) and str(value).strip():
            return _safe_session(str(value))
    given = env.get("AI_MEMORY_SESSION_ID")
    return _safe_session(given) if given else None


def _safe_session(value: str) -> str | None:
    """Session ids become page names; anything unusual is folded to ``-``."""
    return _UNSAFE_SESSION.sub("-", value.strip()).strip("-.")[:100] or None


def _is_session_start(event: str | None, payload: dict[str, Any]) -> bool:
    name = event or payload.get("hook_event_name") or payload.get("hookEventName") or ""
    return isinstance(name, str) and name.casefold().replace("_", "-") in SESSION_START
