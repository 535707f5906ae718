"""``ai-memory hook --agent A --event E``: what agents run on every lifecycle event.

Standard library only, and it never blocks the agent: the event is cut
(:mod:`~ai_memory.hookclient.shrink`) and its secrets redacted
(:mod:`~ai_memory.hookclient.redact`), then spooled, posted with a short
deadline, removed from the spool once the server acknowledged it; the whole
run stays under 200 ms and exits 0 whatever happens, with errors written to
``<data_dir>/logs/hook.log``.
"""

from __future__ import annotations

import sys
import time

from ai_memory import locate
from ai_memory.hookclient import fs, spool
from ai_memory.hookclient.deliver import deliver, key_id, log_error
from ai_memory.hookclient.fastjson import dumps, loads
from ai_memory.hookclient.fastre import Patterns, cache_file
from ai_memory.hookclient.policy import apply, load_policy
from ai_memory.hookclient.redact import holds_secret, redact, redact_payload
from ai_memory.hookclient.resolve import locate_checkout
from ai_memory.hookclient.sessionid import safe_session_id
from ai_memory.hookclient.shrink import shrink
from ai_memory.hookclient.transport import Transport, Unreachable

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` and ``pathlib`` are slow to import: annotations only
    from collections.abc import Mapping
    from typing import IO, Any

# The network gets this much once start-up is done, but not past NETWORK_END_S counted
# from the start of the run (the entry module's first line, before any import), so a
# hung server cannot hold a run past its 200 ms. When a loaded machine made start-up
# itself slow it still gets the floor (events are delivered, not spooled), though never
# past RUN_END_S: a run that started that long ago (a stopped process) only spools.
NETWORK_BUDGET_S = 0.100
NETWORK_END_S = 0.150
NETWORK_FLOOR_S = 0.050
RUN_END_S = 0.500
RETRY_PER_RUN = 32
SESSION_START = frozenset({"session-start", "sessionstart", "session.created"})
PROMPT_EVENTS = frozenset({"user-prompt", "userpromptsubmit", "beforeagent", "beforesubmitprompt"})
SUBAGENT_START = frozenset({"subagentstart", "subagent-start"})
SESSION_END = frozenset({"session-end", "sessionend", "session.deleted"})
# Where a payload names its event and its session, in the order the server reads them.
EVENT_KEYS = ("hook_event_name", "hookEventName", "event", "type")
SESSION_KEYS = ("session_id", "sessionId", "conversation_id", "conversationId", "session")
# A prompt that asks for the context again gets the session's re-grounding packet (/recap).
RECAP_PROMPTS = frozenset(
    {
        "recap",
        "/recap",
        "ai-memory recap",
        "/ai-memory recap",
        "/ai-memory:recap",
        "reload context",
        "reload the context",
        "reload memory",
        "/reload-context",
    }
)
USAGE = """usage: ai-memory hook --agent AGENT [--event EVENT] [--data-dir DIR] [--server URL]

What an agent runs on each lifecycle event: reads the event's JSON payload on stdin,
spools it (secrets redacted), posts it to the server and prints one JSON object for the
agent (the session-start context, or {}). It always exits 0 within about 200 ms.
Install it with `ai-memory install-hooks --agent AGENT` or `ai-memory setup --agent AGENT`.
"""
# A session whose start packet did not arrive gets it with its next prompt.
UNDELIVERED = "handoff-undelivered"
UNDELIVERED_MAX_AGE_S = 86400


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
    started: float | None = None,
) -> int:
    """Handle one agent event; always return 0 and always print one JSON object.

    ``started`` (``time.monotonic``) is when the process began its work; the network
    budget counts from it.
    """
    started = time.monotonic() if started is None else started
    env = fs.environ() if env is None else env
    out = stdout if stdout is not None else sys.stdout
    if "--help" in argv or "-h" in argv:
        out.write(USAGE)
        out.flush()
        return 0
    data_dir: str | None = None
    answer: dict[str, Any] = {}
    try:
        args = parse_args(argv, env)
        data_dir = locate.data_folder(args.data_dir, env)
        answer = handle(args, data_dir, env, _read_stdin(stdin), started)
    except BaseException as exc:  # the agent must never see a failure
        log_error(data_dir, f"{type(exc).__name__}: {exc}")
    try:
        out.write(dumps(answer) + "\n")
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
    args: Args, data_dir: str, env: Mapping[str, str], raw: bytes, started: float
) -> dict[str, Any]:
    payload = parse_payload(raw)
    cwd = _cwd(payload)
    identity, marker = locate_checkout(cwd)
    # The capture policy first: what it drops is never spooled, sent or logged.
    policy = load_policy(identity.root, marker, env)
    if policy.problem is not None:
        warning = f"capture policy not applied, nothing is captured here: {policy.problem}"
        _warn(f"ai-memory: {warning}")
        log_error(data_dir, warning)
    allowed = apply(policy, _raw_event(args.event, payload), payload, cwd)
    if allowed is None:
        return {}
    payload = allowed
    # From here on only redacted text: the spool on disk never holds a secret.
    patterns = Patterns(cache_file())
    payload = redact_payload(payload, patterns)
    params = {
        "agent": args.agent,
        "cwd": redact(cwd, patterns),
        "workspace": identity.workspace,
        "project": identity.project,
        "ingest_key": spool.new_ingest_key(),
    }
    if identity.remote:
        params["remote"] = redact(identity.remote, patterns)
    if args.event:
        params["event"] = args.event
    session_id = _session_id(payload, env, patterns)
    if session_id:
        params["session_id"] = session_id
    folder = fs.join(data_dir, "spool")
    token = locate.token(data_dir, env)
    captured_by = key_id(token)
    entry: dict[str, Any] = {"params": params, "body": payload}
    if captured_by is not None:  # the key's public id: its user owns the event
        entry["key_id"] = captured_by
    spool.write(folder, params["ingest_key"], entry)
    transport = Transport(
        locate.server_url(args.server, data_dir, env),
        token,
        network_deadline(started, time.monotonic()),
    )
    try:
        answer = start_packet(transport, folder, params, args, payload)
        ends = _event_name(args.event, payload) in SESSION_END
        deliver(transport, folder, params, payload, data_dir, RETRY_PER_RUN, captured_by, ends)
        return answer
    finally:
        transport.close()
        patterns.save()


def network_deadline(started: float, now: float) -> float:
    """When the network must be done, for a run that started at ``started`` and is ready now."""
    wanted = min(now + NETWORK_BUDGET_S, started + NETWORK_END_S)
    return min(started + RUN_END_S, max(wanted, now + NETWORK_FLOOR_S))


def start_packet(
    transport: Transport,
    folder: str,
    params: dict[str, str],
    args: Args,
    payload: dict[str, Any],
) -> dict[str, Any]:
    """The handoff packet to print: at session start, or at the next prompt if it was missed.

    It is fetched before the event is posted, so the whole network budget goes to it; a
    fetch that fails leaves a marker, and the session's next prompt asks again (the
    server hands a session the handoff it already claimed).
    """
    name = _event_name(args.event, payload)
    session_id = params.get("session_id")
    marker = fs.join(folder, UNDELIVERED, session_id) if session_id else None
    path = "/handoff"
    if name in SESSION_START:
        query = _packet_query(params, payload)
    elif name in PROMPT_EVENTS and _asks_recap(payload):
        query, path, marker = _packet_query(params, {}), "/recap", None
    elif name in PROMPT_EVENTS and marker is not None and _fresh(marker):
        query = _packet_query(params, {})
    elif name in SUBAGENT_START:
        query, path, marker = _packet_query(params, {}), "/brief", None
    else:
        return {}
    packet = fetch_packet(transport, query, path)
    if marker is not None:
        _mark(marker, packet is None)
    if not packet:
        return {}
    event = "SessionStart" if name in SESSION_START else _raw_event(args.event, payload)
    return envelope(args.agent, packet, event)


def fetch_packet(transport: Transport, query: dict[str, str], path: str = "/handoff") -> str | None:
    """The packet's context text ("" when there is nothing to say); None when not received."""
    try:
        status, packet = transport.request("GET", path, query)
    except Unreachable:
        return None
    if status != 200 or not isinstance(packet, dict):
        return None
    context = packet.get("context")
    return context if isinstance(context, str) else ""


def envelope(agent: str, context: str, event: str = "SessionStart") -> dict[str, Any]:
    """Claude Code, Codex and Gemini all read ``hookSpecificOutput.additionalContext``."""
    if agent == "cursor":
        return {"additional_context": context}
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": context}}


def parse_payload(raw: bytes) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        value = loads(raw)
    except ValueError:
        value = {"raw": raw.decode("utf-8", errors="replace")}
    if not isinstance(value, dict):
        value = {"value": value}
    return shrink(value)


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
    return fs.getcwd()


def _session_id(payload: dict[str, Any], env: Mapping[str, str], patterns: Patterns) -> str | None:
    def secret_in(text: str) -> bool:
        return holds_secret(text, patterns)

    for key in SESSION_KEYS:
        value = payload.get(key)
        # A number is an id (as its digits), a flag is not one (as the server reads it).
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return safe_session_id(str(value), secret_in)
    given = env.get("AI_MEMORY_SESSION_ID")
    return safe_session_id(given, secret_in) if given else None


def _raw_event(event: str | None, payload: dict[str, Any]) -> str:
    if event:
        return event
    for key in EVENT_KEYS:
        name = payload.get(key)
        if isinstance(name, str) and name:
            return name
    return ""


def _event_name(event: str | None, payload: dict[str, Any]) -> str:
    return _raw_event(event, payload).casefold().replace("_", "-")


def _packet_query(params: dict[str, str], payload: dict[str, Any]) -> dict[str, str]:
    query = {k: v for k, v in params.items() if k not in ("ingest_key", "event")}
    source = payload.get("source")
    if isinstance(source, str) and source:
        query["source"] = source[:40]
    return query


def _asks_recap(payload: dict[str, Any]) -> bool:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str) or len(prompt) > 80:
        return False
    return prompt.strip().rstrip(".!?").strip().casefold() in RECAP_PROMPTS


def _warn(message: str) -> None:
    """A line for the person at the terminal; the agent goes on whatever happens."""
    try:
        sys.stderr.write(message[:500] + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


def _fresh(marker: str) -> bool:
    try:
        return time.time() - fs.stat(marker).st_mtime < UNDELIVERED_MAX_AGE_S
    except OSError:
        return False


def _mark(marker: str, missed: bool) -> None:
    """Leave (or clear) the note that this session's packet has not reached the agent."""
    try:
        if missed:
            fs.makedirs(fs.dirname(marker), mode=0o700, exist_ok=True)
            fs.close(fs.open_fd(marker, fs.O_WRONLY | fs.O_CREAT, 0o600))
            fs.utime(marker)
        elif fs.exists(marker):
            fs.unlink(marker)
    except OSError:
        pass
