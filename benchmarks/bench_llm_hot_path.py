"""The hot path with an LLM provider configured costs nothing: hooks and queries side by side.

Two servers on two identical data dirs: one with ``[llm] provider = "none"``, one
with an ``openai-compat`` provider (a fake service on loopback) but answers and
rerank off, as most users will run it. Timed alternately (one run of each per
iteration, which one goes first flipping), so load on the machine falls on both:
the ``ai-memory hook`` command (UserPromptSubmit, as install-hooks writes it),
``memory_query`` over MCP (streamable HTTP, one session) and ``GET
/api/v1/search``. Prints p50 and p95 of each with the ratio of the provider run
to the one without, and checks that the provider was never called.

    python benchmarks/bench_llm_hot_path.py [--pages 300] [--hooks 30] [--queries 200]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx2
import tomlkit
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from tests.fake_llm import FakeLlm

from benchmarks.bench_hooks import hook_env, time_hook
from benchmarks.common import Server, fresh_data_dir, percentile, words

PROJECT = "bench"
SIDES = ("no provider", "provider, answer/rerank off")


def configure_provider(data_dir: Path, base_url: str) -> None:
    """``[llm]`` in the data dir's config.toml, where a user would set it."""
    path = data_dir / "config.toml"
    doc = tomlkit.parse(path.read_text())
    llm = doc["llm"]
    llm["provider"] = "openai-compat"  # type: ignore[index]
    llm["model"] = "bench"  # type: ignore[index]
    llm["base_url"] = base_url  # type: ignore[index]
    path.write_text(tomlkit.dumps(doc))


def seed(server: Server, pages: int) -> None:
    rng = random.Random(7)  # the same pages on both sides
    with server.client() as client:
        for i in range(pages):
            body = f"# Page {i}\n\n{words(rng, 120)}"
            got = client.put(
                f"/api/v1/projects/default/{PROJECT}/pages/notes/p{i:04}.md", json={"body": body}
            )
            got.raise_for_status()


def queries(count: int) -> list[str]:
    rng = random.Random(11)
    return [words(rng, 3) for _ in range(count)]


def order(i: int, sides: int) -> list[int]:
    """Which side runs first flips every iteration, so neither always follows the other."""
    return list(range(sides))[:: 1 if i % 2 == 0 else -1]


def hook_times(servers: list[Server], cwd: Path, runs: int) -> list[list[float]]:
    envs = [hook_env(server.data_dir, server.url) for server in servers]
    times: list[list[float]] = [[] for _ in servers]
    for i in range(runs):
        for side in order(i, len(envs)):
            env = envs[side]
            prompt = {
                "session_id": f"bench-{i}",
                "cwd": str(cwd),
                "hook_event_name": "UserPromptSubmit",
                "prompt": "refactor the writer queue and add a benchmark",
            }
            wall, _ = time_hook(env, cwd, "UserPromptSubmit", prompt)
            times[side].append(wall)
    return times


async def alternate(
    calls: list[Callable[[str], Awaitable[None]]], qs: list[str]
) -> list[list[float]]:
    times: list[list[float]] = [[] for _ in calls]
    for i, text in enumerate(qs):
        for side in order(i, len(calls)):
            call = calls[side]
            started = time.perf_counter()
            await call(text)
            times[side].append((time.perf_counter() - started) * 1000)
    return times


async def query_times(servers: list[Server], qs: list[str]) -> dict[str, list[list[float]]]:
    a, b = (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {s.token}"}, timeout=60)
        for s in servers
    )
    async with a, b:
        ta = streamable_http_client(f"{servers[0].url}/mcp", http_client=a)
        tb = streamable_http_client(f"{servers[1].url}/mcp", http_client=b)
        async with Client(ta, mode="legacy") as ma, Client(tb, mode="legacy") as mb:

            def mcp(client: Client) -> Callable[[str], Awaitable[None]]:
                async def call(text: str) -> None:
                    result = await client.call_tool(
                        "memory_query", {"query": text, "project": PROJECT}
                    )
                    assert not result.is_error, result.content

                return call

            def api(http: httpx2.AsyncClient, server: Server) -> Callable[[str], Awaitable[None]]:
                async def call(text: str) -> None:
                    got = await http.get(
                        f"{server.url}/api/v1/search", params={"q": text, "project": PROJECT}
                    )
                    assert got.status_code == 200, got.text

                return call

            await alternate([mcp(ma), mcp(mb)], qs[:10])  # warm both
            return {
                "memory_query over MCP": await alternate([mcp(ma), mcp(mb)], qs),
                "GET /api/v1/search": await alternate([api(a, servers[0]), api(b, servers[1])], qs),
            }


def report(label: str, times: list[list[float]]) -> None:
    base, provider = times
    print(f"{label}:")
    for side, values in zip(SIDES, times, strict=True):
        print(
            f"  {side:<30} p50 {statistics.median(values):7.2f} ms   "
            f"p95 {percentile(values, 0.95):7.2f} ms   (n={len(values)})"
        )
    p50 = statistics.median(provider) / statistics.median(base)
    p95 = percentile(provider, 0.95) / percentile(base, 0.95)
    print(f"  ratio provider / none        p50 {p50:5.3f}x      p95 {p95:5.3f}x")


def run(pages: int, hooks: int, n_queries: int) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")
    with tempfile.TemporaryDirectory() as tmp, FakeLlm() as fake:
        root = Path(tmp)
        dirs = [fresh_data_dir(root, "none"), fresh_data_dir(root, "provider")]
        configure_provider(dirs[1], fake.openai_url)
        cwd = root / "checkout"
        cwd.mkdir()
        (cwd / ".ai-memory.toml").write_text(f'project = "{PROJECT}"\n')
        with Server(dirs[0]) as none, Server(dirs[1]) as provider:
            servers = [none, provider]
            for server in servers:
                seed(server, pages)
            print(f"{pages} pages per side; one run of each side per iteration, alternately\n")
            report("ai-memory hook UserPromptSubmit, wall", hook_times(servers, cwd, hooks))
            for label, times in asyncio.run(query_times(servers, queries(n_queries))).items():
                report(label, times)
        assert fake.requests == [], "the provider was called on the hot path"
    print("\nprovider calls during the run: 0")
    print(f"load average after: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--hooks", type=int, default=30)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    run(args.pages, args.hooks, args.queries)


if __name__ == "__main__":
    main()
