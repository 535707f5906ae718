"""Latency of the web UI's pages on a real server.

    python benchmarks/bench_web.py [--pages 10000] [--projects 5] [--sessions 200] [--calls 100]
                                   [--data-dir DIR] [--only NAME]

Writes ``--pages`` pages (about 120 words, links to other pages, every fifth
one rewritten once so history has two versions) spread over ``--projects``
projects through the HTTP API, captures ``--sessions`` sessions (a prompt, tool
calls, an answer) through /hook, signs in like a browser (token once, then the
cookie), and prints p50/p95 of every UI page with the HTML size of each: home,
project, page view, search (plain and with explain), health, the sessions
timeline, a session view, the page tree, a diff and the link graph (the tree and
graph twice: as cached, and rendered anew after a write), then the writer's queue
as ``/admin/status`` reports it (the longest wait from submit to start lately).

Besides the latency seen by the client, ``cpu ms`` is the server's CPU time per call
(every thread, read from /proc), which a busy machine disturbs far less; the rows
"after a write" include the write's own work (indexing, the file, git), which the
row "page write alone" shows by itself.

``--data-dir DIR`` keeps the seeded data dir: a later run with the same sizes
measures it again without writing it anew (the sizes are kept in DIR). ``--only``
measures the pages whose name contains that word.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx

from benchmarks.common import Server, fresh_data_dir, percentile, server_cpu_ms, settle, words

FOLDERS = ("concepts", "decisions", "gotchas", "procedures", "notes")


def seed(server: Server, pages: int, projects: int, rng: random.Random) -> None:
    """Write the pages (``page_address`` is the UI address of each)."""
    with server.client() as client:
        for i in range(pages):
            project = f"p{i % projects}"
            path = f"{FOLDERS[i % len(FOLDERS)]}/page-{i}.md"
            link = f"{FOLDERS[(i + projects) % len(FOLDERS)]}/page-{i + projects}.md"
            body = f"{words(rng, 120)}\n\nSee [[{link}]].\n"
            url = f"/api/v1/projects/default/{project}/pages/{path}"
            client.put(url, json={"body": body}).raise_for_status()
            if i % 5 == 0:
                client.put(url, json={"body": body + words(rng, 10)}).raise_for_status()


def capture(server: Server, sessions: int, projects: int, rng: random.Random) -> None:
    """Capture sessions through /hook (session ``s-<i>`` in project ``p<i % projects>``)."""
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


def measure(
    client: httpx.Client,
    urls: list[str],
    before: httpx.Client | None = None,
    *,
    alone: bool = False,
) -> tuple[list[float], int]:
    """Time each GET; with ``before``, write a page first so no cached render answers
    (``alone``: time that write instead, and get nothing)."""
    times: list[float] = []
    size = 0
    for n, url in enumerate(urls):
        start = time.perf_counter()
        if before is not None:
            page = f"/api/v1/projects/default/{url.split('/')[3]}/pages/notes/touch-{n}.md"
            body = {"body": f"touched {time.time_ns()}"}  # new text: a new version, always
            before.put(page, json=body).raise_for_status()
        if alone:
            times.append((time.perf_counter() - start) * 1000)
            continue
        start = time.perf_counter()
        answer = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        answer.raise_for_status()
        size = len(answer.content)
    return times, size


def cases(args: argparse.Namespace, rng: random.Random) -> dict[str, list[str]]:
    """The UI address of every page measured, ``args.calls`` of each."""
    calls, projects = args.calls, args.projects
    addresses = [page_address(i, projects) for i in range(args.pages)]
    sessions = [f"/web/default/p{i % projects}/session/s-{i}" for i in range(args.sessions)]

    def query() -> str:
        return "+".join(words(rng, 3).split())

    return {
        "home /web": ["/web"] * calls,
        "project": [f"/web/default/p{i % projects}" for i in range(calls)],
        "page view + history": [rng.choice(addresses) for _ in range(calls)],
        "diff": [a.replace("/page/", "/diff/") for a in addresses[:: 5 * projects]][:calls],
        "tree": [f"/web/default/p{i % projects}/tree" for i in range(calls)],
        "graph": [f"/web/default/p{i % projects}/graph" for i in range(calls)],
        "sessions timeline": ["/web/sessions"] * calls,
        "session view": [rng.choice(sessions) for _ in range(calls)],
        "health": ["/web/health"] * calls,
        "search (every project)": [f"/web/search?q={query()}" for _ in range(calls)],
        "search + explain (p0)": [
            f"/web/search?q={query()}&project=p0&explain=1" for _ in range(calls)
        ],
        # Last: the writes set off work (git checkpoints) that outlives the case. The
        # write alone first, to tell its cost from the render's in the rows after it.
        "page write alone": [f"/web/default/p{i % projects}/tree" for i in range(calls)],
        "tree after a write": [f"/web/default/p{i % projects}/tree" for i in range(calls)],
        "graph after a write": [f"/web/default/p{i % projects}/graph" for i in range(calls)],
    }


def page_address(i: int, projects: int) -> str:
    return f"/web/default/p{i % projects}/page/{FOLDERS[i % len(FOLDERS)]}/page-{i}.md"


def prepared(stack: ExitStack, args: argparse.Namespace, rng: random.Random) -> Server:
    """A running server on a seeded data dir: ``--data-dir`` if it was seeded alike."""
    sizes = {k: getattr(args, k) for k in ("pages", "projects", "sessions")}
    if args.data_dir is not None:
        data_dir = Path(args.data_dir).resolve()
        marker = data_dir / "bench-web.json"
        if marker.exists() and json.loads(marker.read_text()) == sizes:
            print(f"measuring the data dir seeded earlier: {data_dir}")
            return stack.enter_context(Server(data_dir))
        if data_dir.exists():
            raise SystemExit(f"{data_dir} exists but was not seeded with these sizes")
        data_dir = fresh_data_dir(data_dir.parent, data_dir.name)
    else:
        data_dir = fresh_data_dir(Path(stack.enter_context(tempfile.TemporaryDirectory())), "web")
    server = stack.enter_context(Server(data_dir))
    started = time.perf_counter()
    seed(server, args.pages, args.projects, rng)
    capture(server, args.sessions, args.projects, rng)
    print(
        f"{args.pages} pages in {args.projects} projects and {args.sessions} sessions written "
        f"in {time.perf_counter() - started:.1f} s"
    )
    if args.data_dir is not None:
        (data_dir / "bench-web.json").write_text(json.dumps(sizes))
    return server


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=10000)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--projects", type=int, default=5)
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--only", default="")
    args = parser.parse_args()
    with ExitStack() as stack:
        server = prepared(stack, args, random.Random(7))
        writer = stack.enter_context(server.client())
        client = stack.enter_context(httpx.Client(base_url=server.url, timeout=60))
        signed = client.get("/web/login", params={"token": server.token})
        assert signed.status_code == 303, signed.status_code
        print(f"{'page':<24} {'p50 ms':>8} {'p95 ms':>8} {'cpu ms':>8} {'html KB':>8}", flush=True)
        assert server.process is not None
        for name, urls in cases(args, random.Random(11)).items():
            if args.only not in name:
                continue
            alone = name == "page write alone"
            before = writer if alone or name.endswith("after a write") else None
            measure(client, urls[:5], before, alone=alone)  # warm up
            settle(server.process.pid)
            cpu = server_cpu_ms(server.process.pid)
            times, size = measure(client, urls, before, alone=alone)
            cpu = (server_cpu_ms(server.process.pid) - cpu) / len(urls)
            print(
                f"{name:<24} {percentile(times, 0.5):>8.1f} {percentile(times, 0.95):>8.1f} "
                f"{cpu:>8.1f} {size / 1024:>8.1f}",
                flush=True,
            )
        queue = writer.get("/admin/status").json()["writer"]
        if "longest_recent_wait_ms" not in queue:  # a release before the writer measured it
            print(f"writer: {queue['queue_depth']} queued now (no queue wait reported)")
            return
        print(
            f"writer: {queue['queue_depth']} queued now; the longest wait from submit to start in "
            f"the last {queue['recent_window_s']} s: {queue['longest_recent_wait_ms']:.1f} ms "
            f"({queue['commands']} commands in {queue['transactions']} transactions since start)"
        )


if __name__ == "__main__":
    main()
