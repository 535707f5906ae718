"""Waiting for a freshly started server to answer ``/healthz``."""

from __future__ import annotations

import time

import httpx


def wait_healthy(url: str, timeout_s: float = 30.0, pause_s: float = 0.2) -> str | None:
    """The version the server reports once ``/healthz`` answers; None if it never did."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            answer = httpx.get(f"{url.rstrip('/')}/healthz", timeout=2.0)
            if answer.status_code == 200:
                return str(answer.json().get("version", "?"))
        except (httpx.HTTPError, ValueError):
            pass
        if time.monotonic() + pause_s >= deadline:
            return None
        time.sleep(pause_s)
