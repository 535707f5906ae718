"""Checks that need the running server: reachable, this data dir's, capture end to end."""

from __future__ import annotations

import secrets

import httpx

from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, error, ok, warning

PROBE_PROJECT = "scratch"  # reserved: the probe's session never lands in a real project
PROBE_SESSION = "ai-memory-doctor"


def check_server(ctx: DoctorContext) -> list[Finding]:
    """Reachable at ``server.url``, takes this data dir's token, serves this data dir."""
    if ctx.config is None:
        return []
    url = ctx.server_url
    serve = f"ai-memory serve {ctx.dir_arg}"
    try:
        health = ctx.http().get("/healthz")
    except httpx.TransportError as exc:
        return [error("server", f"nothing answers at {url} ({type(exc).__name__})", serve)]
    if health.status_code != 200:
        return [error("server", f"{url}/healthz answered {health.status_code}", serve)]
    try:
        answer = ctx.http().get("/admin/status")
    except httpx.TransportError as exc:
        return [error("server", f"{url}/admin/status failed ({type(exc).__name__})", serve)]
    if answer.status_code == 401:
        return [
            error(
                "server",
                f"the server at {url} refuses this data dir's token: it serves another data dir",
                f"ai-memory config set server.url <the address of {ctx.data_dir}'s server>"
                f" {ctx.dir_arg}  # or stop the other server and run: {serve}",
            )
        ]
    if answer.status_code != 200:
        return [error("server", f"{url}/admin/status answered {answer.status_code}", serve)]
    ctx.status = answer.json()
    served = str(ctx.status.get("data_dir", ""))
    if served != str(ctx.data_dir):
        return [error("server", f"the server at {url} serves {served}, not {ctx.data_dir}", serve)]
    return [ok("server", f"{url} answers, version {ctx.status.get('version')}")]


def check_capture(ctx: DoctorContext) -> list[Finding]:
    """One real hook event posted to /hook and read back from the session it opened."""
    if ctx.status is None:
        return []
    nonce = secrets.token_hex(8)
    session = PROBE_SESSION  # one session for every run, not one per run
    params = {
        "workspace": "default",
        "project": PROBE_PROJECT,
        "agent": "doctor",
        "session_id": session,
    }
    body = {"hook_event_name": "UserPromptSubmit", "prompt": f"ai-memory doctor probe {nonce}"}
    fix = f"ai-memory serve {ctx.dir_arg}  # then read its log: {ctx.data_dir / 'logs'}"
    try:
        posted = ctx.http().post("/hook", params=params, json=body)
        if posted.status_code != 202:
            return [
                error("capture", f"/hook answered {posted.status_code}: {posted.text[:200]}", fix)
            ]
        read = ctx.http().get(
            f"/api/v1/sessions/{session}/observations",
            params={"workspace": "default", "project": PROBE_PROJECT, "limit": 5},
        )
    except httpx.TransportError as exc:
        return [error("capture", f"the probe event failed ({type(exc).__name__})", fix)]
    if read.status_code != 200 or nonce not in read.text:
        return [warning("capture", "the probe event was accepted but could not be read back", fix)]
    return [ok("capture", "a probe hook event was delivered and read back")]
