"""What one request's body shape makes every other client wait: /healthz beside it.

    python benchmarks/bench_body_shapes.py [--rounds 3] [--baseline NAME=SRC]

A real server gets one request at a time of each body below (about 4 MB each, under the
default request limit), while another client asks ``GET /healthz`` every 5 ms; it prints
each body's answer and how long it took, and the longest /healthz wait meanwhile (the
stall). JSON's decoding costs by the values a body holds, not its bytes, and holds the
interpreter lock on whichever thread it runs; a tool's output nested in lists was once
looked at twice per level. ``--baseline`` runs the same on another tree's ``src``
(``git archive <commit> src | tar -x -C DIR``), alternated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Server, fresh_data_dir, settle
from benchmarks.http_writes import _source
from benchmarks.keepalive import Connection

SIZE = 4 * 1024 * 1024 - 64 * 1024  # under the default 4 MiB request limit
HOOK = "/hook?project=shapes&agent=claude-code&session_id=s&event=PostToolUse"
PAGE = "/api/v1/projects/default/shapes/pages/shapes.md"


def tool_call(response: object) -> bytes:
    return json.dumps({"tool_name": "Bash", "tool_response": response}).encode()


def bodies() -> dict[str, tuple[str, str, bytes]]:
    """Name: (method, target, body)."""
    code = "def pair(a, b):\n    return [a, b], {'a': a, 'b': b}\n"
    nested: object = "x"
    for _ in range(24):
        nested = [nested]
    return {
        "/hook, 4 MB of empty lists": ("POST", HOOK, tool_call({"stdout": [[]] * (SIZE // 4)})),
        "/hook, 4 MB of small numbers": ("POST", HOOK, tool_call({"stdout": [1] * (SIZE // 3)})),
        "/hook, 4 MB of printed code": (
            "POST",
            HOOK,
            tool_call({"stdout": code * (SIZE // len(code) // 2)}),
        ),
        "/hook, output nested 24 lists deep": ("POST", HOOK, tool_call({"stdout": nested})),
        "/hook/batch, 4 MB of empty lists": (
            "POST",
            "/hook/batch",
            json.dumps(
                [{"params": {"project": "shapes"}, "body": {"x": [[]] * (SIZE // 4)}}]
            ).encode(),
        ),
        "page PUT, 4 MB of tags": (
            "PUT",
            PAGE,
            json.dumps({"body": "# shapes", "tags": ["t"] * (SIZE // 5)}).encode(),
        ),
    }


async def probe(server: Server, done: asyncio.Event) -> float:
    """``GET /healthz`` every 5 ms until ``done``: the longest answer, in ms."""
    conn = Connection(server.port, server.token)
    longest = 0.0
    while not done.is_set():
        started = time.perf_counter()
        await conn.request("GET", "/healthz", b"")
        longest = max(longest, (time.perf_counter() - started) * 1000)
        await asyncio.sleep(0.005)
    conn.close()
    return longest


async def one(server: Server, method: str, target: str, body: bytes) -> tuple[int, float, float]:
    """The answer's status, its time and the longest /healthz wait meanwhile, in ms."""
    done = asyncio.Event()
    watching = asyncio.ensure_future(probe(server, done))
    await asyncio.sleep(0.05)
    conn = Connection(server.port, server.token)
    started = time.perf_counter()
    status, _ = await conn.request(method, target, body)
    took = (time.perf_counter() - started) * 1000
    conn.close()
    await asyncio.sleep(0.05)
    done.set()
    return status, took, await watching


def run(tree: str | None, name: str) -> None:
    with tempfile.TemporaryDirectory() as tmp, _source(tree):
        server = Server(fresh_data_dir(Path(tmp), "data"))
        with server:
            asyncio.run(one(server, "POST", HOOK, tool_call({"stdout": "warm up"})))
            assert server.process is not None
            for label, (method, target, body) in bodies().items():
                settle(server.process.pid)
                status, took, stall = asyncio.run(one(server, method, target, body))
                print(
                    f"[{name}] {label:36} {status}  answered in {took:7.1f} ms   "
                    f"longest /healthz meanwhile {stall:7.1f} ms",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--baseline", action="append", default=[], metavar="NAME=SRC", help="another tree"
    )
    args = parser.parse_args()
    trees: list[tuple[str, str | None]] = [("present", None)]
    trees += [(name, path) for name, _, path in (b.partition("=") for b in args.baseline)]
    for _ in range(args.rounds):
        for name, tree in trees:
            run(tree, name)


if __name__ == "__main__":
    main()
