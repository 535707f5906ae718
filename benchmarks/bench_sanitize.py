"""Sanitizer speed: throughput on ordinary and hostile text, and /healthz under hostile load.

Prints, for the server's sanitizer (RE2) and the hook client's redaction
(``re``, on text the client has already cut to 64 KiB), throughput in MB/s
and time per call on ordinary text (prose, code, JSON with secrets) and on
the hostile inputs of the hardening report (``"token" * n`` and friends) at
several sizes: linear time shows as flat MB/s. Then it starts a real server,
sends hostile /hook, /hook/batch and handoff requests from several threads,
and polls /healthz meanwhile: the worst health-check latency is the stall.

    python benchmarks/bench_sanitize.py [--sizes 4096,16384,65536] [--seconds 6]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_memory.hookclient.redact import redact as client_redact
from ai_memory.hooks.sanitize import Sanitizer
from benchmarks.common import Server, fresh_data_dir, percentile, words

SECRETS = (
    "export OPENAI_API_KEY=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx12 ",
    'curl -H "Authorization: Bearer abcDEF123456789xyz" ',
    "postgres://app:hunter2hunter2@db:5432/app ",
    '{"password": "correct-horse-battery"} ',
)


def ordinary(kind: str, size: int) -> str:
    rng = random.Random(size)
    if kind == "prose":
        text = words(rng, size // 6)
    elif kind == "code":
        line = "def handle(event: dict[str, str]) -> None:  # token count {n}\n    return {n}\n"
        text = "".join(line.format(n=i) for i in range(size // 60 + 1))
    else:  # json with a few secrets
        parts = [f'{{"k{i}": "{words(rng, 6)}", "n": {i}}}, ' for i in range(size // 50)]
        text = "".join(p + (SECRETS[i % 4] if i % 40 == 0 else "") for i, p in enumerate(parts))
    return text[:size]


HOSTILE: dict[str, Callable[[int], str]] = {
    "token*n": lambda size: ("token" * (size // 5 + 1))[:size],
    "password*n": lambda size: ("password" * (size // 8 + 1))[:size],
    "a.*n + ://": lambda size: ("a." * (size // 2))[: size - 3] + "://",
    "api_key_*n + quote": lambda size: ("api_key_" * (size // 8 + 1))[: size - 1] + '"',
    "token: *n": lambda size: ("token: " * (size // 7 + 1))[:size],
    "-----BEGIN*n": lambda size: ("-----BEGIN PRIVATE KEY-----" * (size // 27 + 1))[:size],
}


def measure(fn: Callable[[str], object], text: str, budget_s: float = 0.3) -> float:
    """Seconds per call: the best of repeated calls within ``budget_s`` (least disturbed)."""
    times: list[float] = []
    deadline = time.perf_counter() + budget_s
    while not times or (time.perf_counter() < deadline and len(times) < 50):
        start = time.perf_counter()
        fn(text)
        times.append(time.perf_counter() - start)
    return min(times)


def throughput(sizes: list[int]) -> None:
    sanitizer = Sanitizer()
    engines: dict[str, Callable[[str], object]] = {
        "server (RE2)": lambda t: sanitizer.clean(t, len(t)),
        "client (re)": client_redact,
    }
    cases = {f"ordinary {k}": (lambda s, k=k: ordinary(k, s)) for k in ("prose", "code", "json")}
    cases.update({f"hostile {k}": v for k, v in HOSTILE.items()})
    print("## sanitizer throughput (MB/s; ms per call)\n")
    print("| engine | text | " + " | ".join(f"{s // 1024} KiB" for s in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for engine, fn in engines.items():
        for name, make in cases.items():
            cells = []
            for size in sizes:
                text = make(size)
                seconds = measure(fn, text)
                cells.append(f"{len(text) / seconds / 1e6:.1f} ({seconds * 1000:.2f} ms)")
            print(f"| {engine} | {name} | " + " | ".join(cells) + " |")
    print()


def healthz_stall(seconds: float) -> None:
    with tempfile.TemporaryDirectory() as tmp, Server(fresh_data_dir(Path(tmp), "d")) as server:
        params = {"project": "bench", "agent": "claude-code", "session_id": "hostile"}
        hostile = [make(64 * 1024) for make in HOSTILE.values()]
        stop = threading.Event()
        sent = [0]

        def attack(index: int) -> None:
            with server.client() as client:
                while not stop.is_set():
                    text = hostile[(index + sent[0]) % len(hostile)]
                    if index % 3 == 0:
                        client.post(
                            "/hook",
                            params={**params, "event": "UserPromptSubmit"},
                            json={"prompt": text},
                        )
                    elif index % 3 == 1:
                        items = [
                            {
                                "params": {**params, "event": "PostToolUse"},
                                "body": {"tool_name": text, "tool_input": {"command": t}},
                            }
                            for t in hostile * 3
                        ]
                        client.post("/hook/batch", json=items)
                    else:
                        client.post(
                            "/api/v1/handoffs",
                            json={
                                "project": "bench",
                                "summary": text[:3900],
                                "content": {"notes": text[:20000]},
                            },
                        )
                    sent[0] += 1

        with server.client() as client:
            idle = [_timed_get(client) for _ in range(50)]
            threads = [threading.Thread(target=attack, args=(i,)) for i in range(6)]
            for thread in threads:
                thread.start()
            loaded: list[float] = []
            deadline = time.monotonic() + seconds
            while time.monotonic() < deadline:
                loaded.append(_timed_get(client))
                time.sleep(0.005)
            stop.set()
            for thread in threads:
                thread.join()
        print("## /healthz while hostile requests run (6 threads: /hook, /hook/batch, handoffs)\n")
        print(f"hostile requests answered: {sent[0]} in {seconds:.0f} s")
        print(f"/healthz idle:   p50 {percentile(idle, 0.5):.1f} ms, max {max(idle):.1f} ms")
        print(
            f"/healthz loaded: {len(loaded)} checks, p50 {percentile(loaded, 0.5):.1f} ms, "
            f"p99 {percentile(loaded, 0.99):.1f} ms, max {max(loaded):.1f} ms"
        )


def _timed_get(client: object) -> float:
    start = time.perf_counter()
    response = client.get("/healthz")  # type: ignore[attr-defined]
    assert response.status_code == 200
    return (time.perf_counter() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="4096,16384,65536")
    parser.add_argument("--seconds", type=float, default=6.0)
    args = parser.parse_args()
    throughput([int(s) for s in args.sizes.split(",")])
    healthz_stall(args.seconds)


if __name__ == "__main__":
    main()
