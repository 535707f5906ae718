"""Latency of the pending-writes queue on a real server: the web page, the API, a decision.

    python benchmarks/bench_pending.py [--pages 2000] [--pending 100] [--calls 100]

Writes ``--pages`` pages (a fifth of them under ``_rules/``) into one project,
ends one captured session, and has the reviewer propose ``--pending`` edits from
it (half rewrite an existing rule, half add one) through the server's real
openai-compat provider talking to the tests' fake LLM service on loopback. Then
it signs in like a browser and prints p50/p95 of the queue page (the newest 20
pending writes, each with its diff), of ``/web/health`` beside it as the baseline of the same
run, of the API's list and show, and of a rejection posted from the page's form
(its CSRF token included). The machine's load is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from tests.fake_llm import FakeLlm, answer
from tests.learning_support import finish_session

from benchmarks.common import Server, fresh_data_dir, percentile, words

PROJECT = "/api/v1/projects/default/shop/pages"
BATCH = 20  # proposals per review: [learning] max_proposals


def configure(data_dir: Path, fake: FakeLlm) -> None:
    """The provider and the review bounds in config.toml (the server drops AI_MEMORY_*)."""
    config = data_dir / "config.toml"
    text = config.read_text()
    provider = f'[llm]\nprovider = "openai-compat"\nmodel = "m"\nbase_url = "{fake.openai_url}"\n'
    text = text.replace("[llm]\n", provider, 1)
    text = text.replace("[learning]\n", f"[learning]\nmax_proposals = {BATCH}\n", 1)
    config.write_text(text)


def seed(server: Server, fake: FakeLlm, pages: int, pending: int, rng: random.Random) -> None:
    with server.client() as client:
        for i in range(pages):
            folder = "_rules" if i % 5 == 0 else "concepts"
            body = f"# Page {i}\n\n{words(rng, 120)}\n"
            client.put(f"{PROJECT}/{folder}/page-{i}.md", json={"body": body}).raise_for_status()
        finish_session(client, "shop", "s-1", "a session the reviewer learns from")
        for start in range(0, pending, BATCH):
            proposals = [
                {
                    "path": f"_rules/page-{n * 5}.md" if n % 2 else f"_rules/new-{n}.md",
                    "body": f"# Rule {n}\n\n{words(rng, 120)}\n",
                    "rationale": f"proposal {n}",
                }
                for n in range(start, min(start + BATCH, pending))
            ]
            fake.push(answer({"proposals": proposals}))
            made = client.post("/api/v1/auto-improve", json={"project": "shop"}, timeout=120)
            made.raise_for_status()


def timed(calls: int, call: Callable[[int], httpx.Response]) -> tuple[list[float], int]:
    times: list[float] = []
    size = 0
    for n in range(calls):
        start = time.perf_counter()
        response = call(n)
        times.append((time.perf_counter() - start) * 1000)
        assert response.status_code < 400, (response.status_code, response.text[:300])
        size = len(response.content)
    return times, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--pending", type=int, default=100)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(5)
    with tempfile.TemporaryDirectory() as tmp, FakeLlm() as fake:
        data_dir = fresh_data_dir(Path(tmp), "pending")
        configure(data_dir, fake)
        with Server(data_dir) as server:
            seed(server, fake, args.pages, args.pending, rng)
            with server.client() as api, httpx.Client(base_url=server.url, timeout=60) as web:
                assert web.get("/web/login", params={"token": server.token}).status_code == 303
                page = web.get("/web/pending-writes").text
                found = re.search(r'name="csrf" value="([0-9a-f]+)"', page)
                assert found is not None
                ids = [int(n) for n in re.findall(r'id="pw-(\d+)"', page)]
                assert len(ids) == min(args.pending, 20), len(ids)
                oldest = web.get("/web/pending-writes", params={"before": ids[-1]}).text
                ids += [int(n) for n in re.findall(r'id="pw-(\d+)"', oldest)]
                rows: dict[str, Callable[[int], httpx.Response]] = {
                    "health page (baseline)": lambda n: web.get("/web/health"),
                    "queue page (20 shown)": lambda n: web.get("/web/pending-writes"),
                    "API list": lambda n: api.get("/api/v1/pending-writes"),
                    "API show (with diff)": lambda n: api.get(
                        f"/api/v1/pending-writes/{ids[n % len(ids)]}"
                    ),
                }
                print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the start")
                print(f"{'request':<28} {'p50 ms':>8} {'p95 ms':>8} {'KB':>8}")
                for name, call in rows.items():
                    timed(5, call)  # warm up
                    times, size = timed(args.calls, call)
                    print(
                        f"{name:<28} {percentile(times, 0.5):>8.1f} "
                        f"{percentile(times, 0.95):>8.1f} {size / 1024:>8.1f}"
                    )
                rejects = ids[: min(len(ids), args.calls // 2)]
                times, _ = timed(
                    len(rejects),
                    lambda n: web.post(
                        f"/web/pending-writes/{rejects[n]}/reject",
                        data={"csrf": found[1], "reason": "bench"},
                    ),
                )
                print(
                    f"{'reject from the page':<28} {percentile(times, 0.5):>8.1f} "
                    f"{percentile(times, 0.95):>8.1f} {'(303 only)':>8}"
                )
                print(f"load average {os.getloadavg()[0]:.2f} (1 min) at the end")


if __name__ == "__main__":
    main()
