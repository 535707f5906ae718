"""Search latency against basic-memory on the same notes and the same queries.

Both get the same markdown files. ai-memory indexes them as its wiki (a real
``ai-memory serve``, which reconciles the wiki at start) and answers
``GET /api/v1/search`` over HTTP; basic-memory (its own venv, keyword search)
indexes them as a project and answers its MCP ``search_notes`` tool over
stdio (``basic_memory_side.py``). Each side is timed by its client: ours twice,
each query asked by httpx and by a bare keep-alive client (``keepalive.py``) in
turn, once the server is idle (start-up's git checkpoint of the new wiki done);
the bare client's figure is the server's, httpx's adds ~1 ms of its own.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlencode

from benchmarks.common import Server, fresh_data_dir, percentile, settle
from benchmarks.keepalive import Connection

WARMUP = 10
SIDE = Path(__file__).resolve().parent / "basic_memory_side.py"


def write_notes(folder: Path, corpus: list[tuple[str, str, dict[str, Any]]]) -> None:
    for path, body, meta in corpus:
        file = folder / path
        file.parent.mkdir(parents=True, exist_ok=True)
        title = body.split("\n", 1)[0].lstrip("# ").strip()
        front = json.dumps({"title": title, "entities": meta["entities"]})
        file.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")


class SearchTimes(NamedTuple):
    """p50 of ai-memory's search by each client, in ms."""

    direct: float  # a bare keep-alive client: the server's own latency
    httpx: float


def ours(
    root: Path, corpus: list[tuple[str, str, dict[str, Any]]], texts: list[str]
) -> SearchTimes:
    data_dir = fresh_data_dir(root, "ai-memory")
    write_notes(data_dir / "wiki" / "default" / "bench", corpus)
    with Server(data_dir) as server, server.client() as client:
        deadline = time.monotonic() + 300
        while client.get("/api/v1/status").json().get("pages", 0) < len(corpus):
            if time.monotonic() > deadline:
                raise SystemExit("the wiki was never indexed")
            time.sleep(0.2)
        assert server.process is not None
        settle(server.process.pid)
        times = asyncio.run(_both_clients(server, client, texts))
    for name, values in times.items():
        print(
            f"ai-memory GET /api/v1/search ({name}): p50 {statistics.median(values):.1f} ms, "
            f"p95 {percentile(values, 0.95):.1f} ms"
        )
    return SearchTimes(*(statistics.median(values) for values in times.values()))


async def _both_clients(server: Server, client: Any, texts: list[str]) -> dict[str, list[float]]:
    """Each query asked by both clients in turn, so both see the same load."""
    direct = Connection(server.port, server.token)
    times: dict[str, list[float]] = {"keep-alive client": [], "httpx": []}
    for i, text in enumerate(texts[:WARMUP] + texts):
        query = {"q": text, "project": "bench", "limit": 10}
        started = time.perf_counter()
        status, _ = await direct.request("GET", "/api/v1/search?" + urlencode(query), b"")
        middle = time.perf_counter()
        client.get("/api/v1/search", params=query).raise_for_status()
        ended = time.perf_counter()
        if status != 200:
            raise SystemExit(f"search answered {status}")
        if i >= WARMUP:
            times["keep-alive client"].append((middle - started) * 1000)
            times["httpx"].append((ended - middle) * 1000)
    direct.close()
    return times


def theirs(
    python: str, root: Path, corpus: list[tuple[str, str, dict[str, Any]]], texts: list[str]
) -> float:
    figures = basic_memory_figures(python, root, corpus, texts)
    print(
        f"basic-memory MCP search_notes (text): p50 {figures['p50_ms']:.1f} ms, "
        f"p95 {figures['p95_ms']:.1f} ms"
    )
    return float(figures["p50_ms"])


def basic_memory_figures(
    python: str,
    root: Path,
    corpus: list[tuple[str, str, dict[str, Any]]],
    texts: list[str],
    add_only: bool = False,
) -> dict[str, Any]:
    """basic-memory indexes the notes, then answers every query: its figures (JSON line).
    ``add_only``: no full reindex after ``project add`` (it takes as long again)."""
    notes = root / "bm-notes"
    write_notes(notes, corpus)
    queries = root / "queries.json"
    queries.write_text(json.dumps(texts))
    out = subprocess.run(
        [
            python,
            str(SIDE),
            str(notes),
            str(queries),
            str(root / "bm-home"),
            *(["--add-only"] if add_only else []),
        ],
        check=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ).stdout
    figures: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    return figures


def run(python: str, corpus: list[tuple[str, str, dict[str, Any]]], texts: list[str]) -> None:
    print(f"\n## side by side with basic-memory: {len(corpus):,} notes, {len(texts)} queries")
    with tempfile.TemporaryDirectory(prefix="bench-vs-") as tmp:
        mine = ours(Path(tmp), corpus, texts)
        other = theirs(python, Path(tmp), corpus, texts)
    print(
        f"ai-memory is {other / mine.direct:.1f}x faster at p50 "
        f"({other / mine.httpx:.1f}x through httpx)"
    )
