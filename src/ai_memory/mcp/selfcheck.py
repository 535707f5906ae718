"""The end of ``ai-memory setup``: is the server up, and does one MCP call work?"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from typing import Any

import httpx

from ai_memory.core.errors import Unavailable

_MESSAGES = [
    {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "ai-memory-setup", "version": "1"},
        },
    },
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "memory_status", "arguments": {}},
    },
]


@dataclass(frozen=True, slots=True)
class CheckResult:
    version: str
    scope: dict[str, Any]
    pages: int


def self_check(url: str, bridge: list[str], timeout: float = 30.0) -> CheckResult:
    """Raise :class:`Unavailable` with the reason when either step fails."""
    try:
        health = httpx.get(url.rstrip("/") + "/healthz", timeout=5).json()
    except (httpx.HTTPError, ValueError) as exc:
        raise Unavailable(
            f"the server at {url} does not answer ({type(exc).__name__}); "
            "start it with `ai-memory serve` and run setup again"
        ) from exc
    stdin = "".join(json.dumps(m) + "\n" for m in _MESSAGES)
    done = subprocess.run(bridge, input=stdin, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise Unavailable(f"the MCP bridge failed: {done.stderr.strip()[-500:]}")
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    call = next((a for a in answers if a.get("id") == 2), None)
    if call is None or "error" in call or call["result"].get("isError"):
        raise Unavailable(f"the MCP call memory_status failed: {call}")
    status = call["result"]["structuredContent"]
    return CheckResult(str(health.get("version")), status["scope"], int(status.get("pages", 0)))
