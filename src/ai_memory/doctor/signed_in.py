"""Checks for a laptop signed in with ``ai-memory login``: the team server and the key.

Such a machine has no server or index of its own: its hooks, MCP bridge and client
commands send the stored key to the signed-in server, so that is what is checked.
"""

from __future__ import annotations

import httpx

from ai_memory.core.apikeys import parse_prefix
from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, error, ok

SKIPPED = "data_dir, token, server, capture and index checks"


def key_label(key: str) -> str:
    """``the key aim_<prefix>``: names the key, never its secret."""
    prefix = parse_prefix(key)
    return f"the key aim_{prefix}" if prefix else "the token in use"


def check_signed_in(ctx: DoctorContext) -> list[Finding]:
    """The skipped local checks, then whoami: the server answers and takes the key."""
    url = ctx.server_url or ""
    note = ok("signed_in", f"this machine is signed in to {url}: the local {SKIPPED} are skipped")
    fix = f"ai-memory login --server {url} --key-stdin"
    try:
        answer = ctx.http().get("/api/v1/whoami")
    except httpx.TransportError as exc:
        reason = f"nothing answers at {url} ({type(exc).__name__})"
        return [note, error("whoami", reason, f"check the address and network; or {fix}")]
    label = key_label(ctx.token or "")
    if answer.status_code == 401:
        why = "it is revoked, its user is disabled, or it is another server's key"
        return [note, error("whoami", f"{url} refuses {label}: {why}", f"{fix}  # a new key")]
    if answer.status_code != 200:
        return [note, error("whoami", f"{url}/api/v1/whoami answered {answer.status_code}", fix)]
    user = answer.json().get("user")
    return [note, ok("whoami", f"{url} answers and takes {label}: signed in as {user}")]
