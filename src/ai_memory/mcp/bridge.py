"""``ai-memory mcp-bridge``: a stdio MCP server that forwards every message to /mcp.

Agents that only speak stdio (or that should not hold the token) launch this.
It adds what the HTTP server cannot know: the bearer token (read from the data
dir, never from the agent's config), the agent's session id and the directory
the agent was launched in, which scope resolution uses. Standard library only,
and only the fast part of it (the hook client's raw-socket HTTP and JSON, no
``http.client``, ``json``, ``re``, ``dataclasses`` or ``typing``), so it answers ``initialize``
soon after it is spawned; it checks the server before reading a single message
and exits at once, saying why, when the server is unreachable or refuses the
token.
"""

from __future__ import annotations

import os
import sys
import time

from ai_memory import locate
from ai_memory.hookclient import fastjson as json
from ai_memory.hookclient.transport import Connection, quote, split_url

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import IO, Any

# Where agents put their session id, first match wins.
SESSION_ENV = (
    "AI_MEMORY_SESSION_ID",
    "CLAUDE_SESSION_ID",
    "CLAUDE_CODE_SESSION_ID",
    "CODEX_SESSION_ID",
    "GEMINI_SESSION_ID",
    "CURSOR_SESSION_ID",
    "OPENCODE_SESSION_ID",
)
TIMEOUT_S = 60.0
PROBE = b'{"jsonrpc":"2.0","id":"ai-memory-bridge-probe","method":"ping"}'
# How a keep-alive connection the server already closed fails, before a byte of the
# answer arrived: the message never reached the server.
STALE = (BrokenPipeError, ConnectionResetError)


class BridgeError(Exception):
    """The server cannot be used; the message says why and what to do."""


class Target:
    """Where to forward, and what the server cannot know (a plain class: fast to import)."""

    __slots__ = ("agent", "cwd", "session_id", "token", "url")

    def __init__(
        self, url: str, token: str | None, session_id: str | None, cwd: str, agent: str | None
    ) -> None:
        self.url = url
        self.token = token
        self.session_id = session_id
        self.cwd = cwd
        self.agent = agent

    def headers(self, protocol_version: str | None) -> dict[str, str]:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "X-AI-Memory-Cwd": quote(self.cwd, safe="/"),
        }
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.session_id:
            headers["X-AI-Memory-Session"] = quote(self.session_id, safe="")
        if self.agent:
            headers["X-AI-Memory-Agent"] = quote(self.agent, safe="")
        if protocol_version:
            headers["MCP-Protocol-Version"] = protocol_version
        return headers


def resolve_target(argv: list[str], env: Mapping[str, str], cwd: str) -> Target:
    """``--server``/``--data-dir`` flags, else the environment, else the data dir's files."""
    options = _flags(argv)
    data_dir = locate.data_folder(options.get("--data-dir"), env)
    url = locate.server_url(options.get("--server"), data_dir, env)
    token = locate.token(data_dir, env)
    session = next((env[name] for name in SESSION_ENV if env.get(name)), None)
    return Target(url.rstrip("/"), token, session, cwd, env.get("AI_MEMORY_AGENT") or None)


USAGE = """usage: ai-memory mcp-bridge [--server URL] [--data-dir DIR]

Serve MCP on stdin/stdout for an agent, forwarding every message to the
ai-memory server's /mcp with the token, the session id and this directory.
"""


class ShowHelp(Exception):
    """``--help`` was asked for."""


def _flags(argv: list[str]) -> dict[str, str]:
    options: dict[str, str] = {}
    items = iter(argv)
    for item in items:
        if item in ("-h", "--help"):
            raise ShowHelp
        name, eq, value = item.partition("=")
        if name not in ("--server", "--data-dir"):
            raise BridgeError(f"unknown option {item!r} (known: --server URL, --data-dir DIR)")
        value = value if eq else next(items, "")
        if not value:
            raise BridgeError(f"{name} needs a value")
        options[name] = value
    return options


class Forwarder:
    """One keep-alive connection to the server's /mcp endpoint.

    A message is sent again only when the server closed an idle keep-alive
    connection before reading it: the send, or the wait for the status line,
    failed on a reused connection with a broken pipe, a reset or a close and not
    one response byte arrived. After a timeout or a fresh connection's failure
    the call may have run, and tools such as memory_feedback or the handoff tools
    must not run twice, so the error goes back to the agent instead.
    """

    def __init__(self, target: Target, timeout: float = TIMEOUT_S) -> None:
        try:
            scheme, host, port, prefix = split_url(target.url)
        except ValueError as exc:
            raise BridgeError(str(exc)) from None
        self.target = target
        self.timeout = timeout
        self.path = prefix + "/mcp"
        self.host = f"{host}:{port}"
        self.protocol_version: str | None = None
        self.conn = Connection(host, port, scheme == "https", time.monotonic() + timeout)

    @property
    def reused(self) -> bool:
        """The open connection has carried an answered request."""
        return self.conn.reused

    def post(self, body: bytes) -> tuple[int, bytes]:
        head = self._head(len(body))
        while True:
            reused = self.conn.reused
            self.conn.deadline = time.monotonic() + self.timeout
            try:
                return self.conn.exchange(head, body)
            except (OSError, ValueError) as exc:
                if reused and not self.conn.received and isinstance(exc, STALE):
                    continue  # the server had closed it; the next try is on a fresh connection
                raise BridgeError(self._failure(exc, self.conn.connected)) from exc

    def _head(self, length: int) -> bytes:
        lines = [f"POST {self.path} HTTP/1.1", f"Host: {self.host}"]
        lines += [f"{k}: {v}" for k, v in self.target.headers(self.protocol_version).items()]
        lines += [f"Content-Length: {length}", "Connection: keep-alive"]
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _failure(self, exc: BaseException, connected: bool) -> str:
        """Why the call failed, and whether it may have run on the server."""
        where = f"the ai-memory server at {self.target.url}"
        if not connected:
            return (
                f"cannot reach {where} ({type(exc).__name__}: {exc}); is `ai-memory serve` running?"
            )
        if isinstance(exc, TimeoutError):
            return (
                f"no answer from {where} within {self.timeout:g} s; the call may still "
                "complete there, so check (e.g. memory_read_page) before repeating it"
            )
        return (
            f"the connection to {where} failed during the call ({type(exc).__name__}: {exc}); "
            "it may have run, so check before repeating it"
        )

    def check(self) -> None:
        """Fail now, not on the agent's first tool call, if the server will not answer."""
        status, body = self.post(PROBE)
        if status == 401:
            from ai_memory.hookclient.refusal import advice

            raise BridgeError(
                f"the ai-memory server at {self.target.url} answered 401 "
                f"({_server_message(body)}): {advice(os.environ)}"
            )
        if status >= 400:
            raise BridgeError(
                f"the ai-memory server at {self.target.url} answered HTTP {status} "
                f"({_server_message(body)})"
            )

    def forward(self, line: bytes) -> bytes | None:
        """Send one JSON-RPC message; the answer to write back, or None for notifications."""
        try:
            message = json.loads(line)
        except ValueError:
            return _error(None, -32700, "parse error: each line must be one JSON-RPC message")
        try:
            status, body = self.post(line)
        except BridgeError as exc:
            return _error(_id_of(message), -32000, str(exc))
        if status == 202 or not body.strip():
            return None
        if status >= 400 and not _is_jsonrpc(body):
            message_text = f"HTTP {status} from the server: {_server_message(body)}"
            return _error(_id_of(message), -32000, message_text)
        self._note_version(message, body)
        return body.strip()

    def _note_version(self, message: Any, body: bytes) -> None:
        if isinstance(message, dict) and message.get("method") == "initialize":
            try:
                result = json.loads(body).get("result") or {}
            except (ValueError, AttributeError):
                return
            version = result.get("protocolVersion")
            self.protocol_version = version if isinstance(version, str) else None


def _id_of(message: Any) -> Any:
    return message.get("id") if isinstance(message, dict) else None


def _is_jsonrpc(body: bytes) -> bool:
    try:
        return isinstance(json.loads(body), dict | list)
    except ValueError:
        return False


def _server_message(body: bytes) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body[:200].decode("utf-8", "replace").strip() or "no details"
    if isinstance(data, dict):
        return str(data.get("message") or data.get("error") or data)[:300]
    return str(data)[:300]


def _error(request_id: Any, code: int, message: str) -> bytes:
    payload = {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
    return json.dumps(payload).encode("utf-8")


def serve(forwarder: Forwarder, stdin: IO[bytes], stdout: IO[bytes]) -> None:
    for line in stdin:
        if not line.strip():
            continue
        answer = forwarder.forward(line)
        if answer is not None:
            stdout.write(answer + b"\n")
            stdout.flush()


def connect(argv: list[str]) -> Forwarder:
    forwarder = Forwarder(resolve_target(argv, os.environ, os.getcwd()))
    forwarder.check()
    return forwarder


def run(argv: list[str]) -> int:
    try:
        forwarder = connect(argv)
    except ShowHelp:
        sys.stdout.write(USAGE)
        return 0
    except BridgeError as exc:
        sys.stderr.write(f"ai-memory mcp-bridge: {exc}\n")
        return 1
    try:
        serve(forwarder, sys.stdin.buffer, sys.stdout.buffer)
    except (KeyboardInterrupt, BrokenPipeError):
        return 0
    return 0
