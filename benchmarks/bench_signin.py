"""What web sign-in costs on a real server: the password check, a sign-in, a signed-in page.

    python benchmarks/bench_signin.py [--calls 50]

Prints p50/p95 of argon2id hashing and checking in this process (with the
server's parameters, and a check with argon2-cffi's heavier defaults beside
it), of a whole password sign-in over HTTP (the form, then the POST with its
CSRF token), of a wrong password, and of ``/web/health`` three ways: with the
root token's bearer header (no cookie lookup: the baseline), with an admin's
web session cookie (one indexed read per request), and, on a second data dir
with no passwords, with the token's cookie. The machine's load is printed with
the figures.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from argon2 import PasswordHasher

from ai_memory.store import passwords
from benchmarks.common import Server, fresh_data_dir, percentile

NAME, PASSWORD = "bench", "bench-password-1"


def timed(calls: int, call: Callable[[], object]) -> list[float]:
    times: list[float] = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    return times


def row(name: str, times: list[float]) -> None:
    print(f"{name:<36} {percentile(times, 0.5):>8.1f} {percentile(times, 0.95):>8.1f}")


def sign_in(server: Server, password: str, expect: int) -> httpx.Client:
    client = httpx.Client(base_url=server.url, timeout=60)
    form = client.get("/web/login").text
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    answer = client.post("/web/login", data={"name": NAME, "password": password, "csrf": csrf[1]})
    assert answer.status_code == expect, (answer.status_code, answer.text[:200])
    return client


def ok(response: httpx.Response) -> None:
    assert response.status_code == 200, (response.status_code, response.text[:200])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    calls = args.calls
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
    print(f"{'what':<36} {'p50 ms':>8} {'p95 ms':>8}")
    stored = passwords.hash_password(PASSWORD)
    heavy = PasswordHasher()  # argon2-cffi's own defaults: 64 MiB, 3 passes, 4 lanes
    heavy_hash = heavy.hash(PASSWORD)
    few = min(calls, 20)
    row("argon2id hash (ours, in process)", timed(few, lambda: passwords.hash_password(PASSWORD)))
    row(
        "argon2id check (ours, in process)",
        timed(few, lambda: passwords.password_matches(stored, PASSWORD)),
    )
    row("argon2id check (library defaults)", timed(few, lambda: heavy.verify(heavy_hash, PASSWORD)))
    with tempfile.TemporaryDirectory() as tmp:
        single_dir = fresh_data_dir(Path(tmp), "single")
        with Server(single_dir) as single, httpx.Client(base_url=single.url, timeout=60) as web:
            assert web.get("/web/login", params={"token": single.token}).status_code == 303
            timed(5, lambda: ok(web.get("/web/health")))
            row("/web/health, token cookie", timed(calls, lambda: ok(web.get("/web/health"))))
        with Server(fresh_data_dir(Path(tmp), "team")) as server:
            with server.client() as root:
                root.post("/admin/users", json={"name": NAME, "admin": True}).raise_for_status()
                password = {"password": PASSWORD}
                root.put(f"/admin/users/{NAME}/password", json=password).raise_for_status()
                timed(5, lambda: ok(root.get("/web/health")))
                row(
                    "/web/health, bearer token (baseline)",
                    timed(calls, lambda: ok(root.get("/web/health"))),
                )
            with closing(sign_in(server, PASSWORD, 303)) as web:
                timed(5, lambda: ok(web.get("/web/health")))
                row("/web/health, session cookie", timed(calls, lambda: ok(web.get("/web/health"))))
            tries = min(calls, 20)  # under the rate limit: a right password clears the count
            row(
                "password sign-in (form + POST)",
                timed(tries, lambda: sign_in(server, PASSWORD, 303).close()),
            )
            wrong: list[float] = []
            for _ in range(4):  # 16 failures: under the address's 20 in five minutes
                wrong += timed(4, lambda: sign_in(server, "not-it-at-all", 401).close())
                sign_in(server, PASSWORD, 303).close()
            row("wrong password (form + POST)", wrong)
    print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
