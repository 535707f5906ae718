"""What every eval needs: a real server on a fresh data dir, and a way to ask it.

``running_server`` starts ``ai-memory serve`` on a free loopback port and
yields its URL, token and data dir. ``searcher`` asks ``memory_query`` through
a real MCP client (or ``GET /api/v1/search``); both return the hits as JSON.
``turn_keys`` reads, from the data dir's index, the ingest key of every
observation, so an eval can tell which captured turn a hit points at.
"""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

BATCH = 256


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def running_server(
    vectors: bool, keep: Path | None, settings: dict[str, str]
) -> Iterator[tuple[str, str, Path]]:
    """A fresh data dir and a real server on a free port; yields (url, token, data dir)."""
    tmp = tempfile.TemporaryDirectory(prefix="eval-")
    data_dir = keep or Path(tmp.name) / "data"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
    env["AI_MEMORY_EMBEDDINGS__PROVIDER"] = "local" if vectors else "none"
    env.update(settings)
    cli = [sys.executable, "-m", "ai_memory"]
    subprocess.run([*cli, "init", "--data-dir", str(data_dir)], env=env, check=True, stdout=-3)
    port = _free_port()
    log = open(data_dir / "eval-server.log", "ab")  # noqa: SIM115
    proc = subprocess.Popen(
        [*cli, "serve", "--data-dir", str(data_dir), "--bind", f"127.0.0.1:{port}"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, proc)
        token = (data_dir / "auth-tokens" / "default").read_text().strip()
        yield url, token, data_dir
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        tmp.cleanup()


def _wait_healthy(url: str, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise SystemExit("the server did not become healthy")


def send_hooks(client: httpx.Client, items: list[dict[str, Any]]) -> int:
    """Post hook events through ``/hook/batch``, retrying what the server deferred (429)."""
    for start in range(0, len(items), BATCH):
        chunk = items[start : start + BATCH]
        for attempt in range(100):
            response = client.post("/hook/batch", json=chunk)
            response.raise_for_status()
            results = response.json()["results"]
            retry = [chunk[r["index"]] for r in results if r["status"] == 429]
            bad = [r for r in results if r["status"] not in (202, 429)]
            if bad:
                raise SystemExit(f"hook batch rejected items: {bad[:3]}")
            if not retry:
                break
            chunk = retry
            time.sleep(0.05 * (attempt + 1))
    return len(items)


def turn_keys(data_dir: Path) -> dict[int, str]:
    """observation id -> ingest key, read from the index (read-only)."""
    uri = f"file:{data_dir / 'db' / 'memory.sqlite'}?mode=ro"
    with sqlite3.connect(uri, uri=True) as conn:
        rows = conn.execute("SELECT id, ingest_key FROM observations").fetchall()
    return {int(i): str(k) for i, k in rows if k}


class HttpSearch:
    name = "GET /api/v1/search"

    def __init__(self, client: httpx.Client) -> None:
        self.client = client

    def __call__(self, project: str, question: str, **extra: Any) -> dict[str, Any]:
        params = {"q": question, "project": project, "limit": 10, **extra}
        response = self.client.get("/api/v1/search", params=params)
        response.raise_for_status()
        result: dict[str, Any] = response.json()
        return result


def searcher(query_via: str, url: str, token: str, client: httpx.Client) -> Any:
    if query_via == "mcp":
        from mcp_search import McpSearch  # type: ignore[import-not-found]

        return McpSearch(url, token)
    return HttpSearch(client)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[int(share * (len(ordered) - 1))] if ordered else 0.0
