"""What authenticating an API key costs a request, against the root token.

    python benchmarks/bench_keyauth.py [--requests 400] [--users 50]

A fresh data dir gets ``--users`` users with a key each; the whole app then
answers ``GET /api/v1/whoami`` in process, alternately with the root token (one
constant-time compare) and with a user's key (one indexed read of its row and a
hash on every request, no cache, so a revoked key is refused at once). It prints
p50/p95 per credential, the ratio of the key's to the token's, and the load average.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from starlette.testclient import TestClient

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.maintenance.init import initialise, read_token
from ai_memory.runtime import Runtime
from ai_memory.server import create_app
from ai_memory.store import identity_admin


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    parser.add_argument("--users", type=int, default=50)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config = Config.load(Path(tmp) / "data", {})
        initialise(config)
        token = read_token(config.token_file)
        assert token is not None
        with TestClient(create_app(config, token), base_url="http://127.0.0.1") as client:
            keys = make_keys(client.app.state.runtime, args.users)  # type: ignore[attr-defined]
            timings = measure(client, token, keys, args.requests)
    root = timings["root token"]
    for name, values in timings.items():
        p50, p95 = percentile(values, 50), percentile(values, 95)
        ratio = p50 / percentile(root, 50)
        print(f"{name:>10}: p50 {p50 * 1e3:.3f} ms  p95 {p95 * 1e3:.3f} ms  x{ratio:.2f}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def make_keys(runtime: Runtime, users: int) -> list[str]:
    def command(conn: sqlite3.Connection) -> list[str]:
        now, made = now_iso(), []
        for n in range(users):
            identity_admin.add_user(conn, f"user-{n}", admin=False, now=now)
            key = identity_admin.create_key(conn, f"user-{n}", label="bench", now=now)
            made.append(str(key["key"]))
        return made

    return runtime.writer.call(command)


def measure(
    client: TestClient, token: str, keys: list[str], requests: int
) -> dict[str, list[float]]:
    timings: dict[str, list[float]] = {"root token": [], "API key": []}
    for n in range(requests):
        for name, credential in (("root token", token), ("API key", keys[n % len(keys)])):
            headers = {"Authorization": f"Bearer {credential}"}
            started = time.perf_counter()
            answer = client.get("/api/v1/whoami", headers=headers)
            timings[name].append(time.perf_counter() - started)
            assert answer.status_code == 200, answer.text
    return timings


def percentile(values: list[float], pct: int) -> float:
    return statistics.quantiles(values, n=100)[pct - 1]


if __name__ == "__main__":
    main()
