"""Latency of the web UI's pages on a real server.

    python benchmarks/bench_web.py [--pages 10000] [--projects 5] [--sessions 200] [--calls 100]

Writes ``--pages`` pages (about 120 words, links to other pages, every fifth
one rewritten once so history has two versions) spread over ``--projects``
projects through the HTTP API, captures ``--sessions`` sessions (a prompt, tool
calls, an answer) through /hook, signs in like a browser (token once, then the
cookie), and prints p50/p95 of every UI page with the HTML size of each: home,
project, page view, search (plain and with explain), health, the sessions
timeline, a session view, the page tree, a diff and the link graph.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks.common import Server, fresh_data_dir, percentile, words

FOLDERS = ("concepts", "decisions", "gotchas", "procedures", "notes")


def seed(server: Server, pages: int, projects: int, rng: random.Random) -> list[str]:
    """Write the pages; return the UI address of each."""
    addresses: list[str] = []
    with server.client() as client:
        for i in range(pages):
            project = f"p{i % projects}"
            path = f"{FOLDERS[i % len(FOLDERS)]}/page-{i}.md"
            link = f"{FOLDERS[(i + 1) % len(FOLDERS)]}/page-{i + projects}.md"
            body = f"{words(rng, 120)}\n\nSee [[{link}]].\n"
            url = f"/api/v1/projects/default/{project}/pages/{path}"
            client.put(url, json={"body": body}).raise_for_status()
            if i % 5 == 0:
                client.put(url, json={"body": body + words(rng, 10)}).raise_for_status()
            addresses.append(f"/web/default/{project}/page/{path}")
    return addresses


def capture(server: Server, sessions: int, projects: int, rng: random.Random) -> list[str]:
    """Capture sessions through /hook; return the UI address of each session view."""
    addresses: list[str] = []
    with server.client() as client:
        for i in range(sessions):
            project = f"p{i % projects}"
            params = {"project": project, "agent": "claude-code", "session_id": f"s-{i}"}
            events = [
                {"hook_event_name": "UserPromptSubmit", "prompt": words(rng, 20)},
                *(
                    {
                        "hook_event_name": "PostToolUse",
                        "tool_name": "Bash",
                        "tool_input": {"command": f"pytest -q tests/test_{j}.py"},
                        "tool_response": {"stdout": words(rng, 30), "exit_code": j % 2},
                    }
                    for j in range(6)
                ),
                {"hook_event_name": "Stop", "last_assistant_message": words(rng, 40)},
            ]
            for event in events:
                client.post("/hook", params=params, json=event).raise_for_status()
            addresses.append(f"/web/default/{project}/session/s-{i}")
    return addresses


def measure(client: httpx.Client, urls: list[str]) -> tuple[list[float], int]:
    times: list[float] = []
    size = 0
    for url in urls:
        start = time.perf_counter()
        answer = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        answer.raise_for_status()
        size = len(answer.content)
    return times, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--projects", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, Server(fresh_data_dir(Path(tmp), "web")) as server:
        started = time.perf_counter()
        addresses = seed(server, args.pages, args.projects, rng)
        session_views = capture(server, args.sessions, args.projects, rng)
        print(
            f"{args.pages} pages in {args.projects} projects written in "
            f"{time.perf_counter() - started:.1f} s"
        )
        with httpx.Client(base_url=server.url, timeout=60) as client:
            signed = client.get("/web/login", params={"token": server.token})
            assert signed.status_code == 303, signed.status_code
            cases = {
                "home /web": ["/web"] * args.calls,
                "project": [f"/web/default/p{i % args.projects}" for i in range(args.calls)],
                "page view": [rng.choice(addresses) for _ in range(args.calls)],
                "search (every project)": [
                    f"/web/search?q={'+'.join(words(rng, 3).split())}" for _ in range(args.calls)
                ],
                "search + explain": [
                    f"/web/search?q={'+'.join(words(rng, 3).split())}&project=p0&explain=1"
                    for _ in range(args.calls)
                ],
                "health": ["/web/health"] * args.calls,
                "sessions timeline": ["/web/sessions"] * args.calls,
                "session view": [rng.choice(session_views) for _ in range(args.calls)],
                "tree": [f"/web/default/p{i % args.projects}/tree" for i in range(args.calls)],
                "diff": [a.replace("/page/", "/diff/") for a in addresses[:: 5 * args.projects]][
                    : args.calls
                ],
                "graph": [f"/web/default/p{i % args.projects}/graph" for i in range(args.calls)],
            }
            print(f"{'page':<24} {'p50 ms':>8} {'p95 ms':>8} {'html KB':>8}")
            for name, urls in cases.items():
                measure(client, urls[:5])  # warm up
                times, size = measure(client, urls)
                print(
                    f"{name:<24} {percentile(times, 0.5):>8.1f} {percentile(times, 0.95):>8.1f} "
                    f"{size / 1024:>8.1f}"
                )


if __name__ == "__main__":
    main()
