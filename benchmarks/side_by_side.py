"""Search latency against basic-memory on the same notes and the same queries.

Both get the same markdown files. ai-memory indexes them as its wiki (a real
``ai-memory serve``, which reconciles the wiki at start) and answers
``GET /api/v1/search`` over HTTP; basic-memory (its own venv, keyword search)
indexes them as a project and answers its MCP ``search_notes`` tool over
stdio (``basic_memory_side.py``). Each side is timed by its client.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Server, fresh_data_dir, percentile

WARMUP = 10
SIDE = Path(__file__).resolve().parent / "basic_memory_side.py"


def write_notes(folder: Path, corpus: list[tuple[str, str, dict[str, Any]]]) -> None:
    for path, body, meta in corpus:
        file = folder / path
        file.parent.mkdir(parents=True, exist_ok=True)
        title = body.split("\n", 1)[0].lstrip("# ").strip()
        front = json.dumps({"title": title, "entities": meta["entities"]})
        file.write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")


def ours(root: Path, corpus: list[tuple[str, str, dict[str, Any]]], texts: list[str]) -> float:
    data_dir = fresh_data_dir(root, "ai-memory")
    write_notes(data_dir / "wiki" / "default" / "bench", corpus)
    with Server(data_dir) as server, server.client() as client:

        def ask(text: str) -> None:
            params: dict[str, str | int] = {"q": text, "project": "bench", "limit": 10}
            client.get("/api/v1/search", params=params).raise_for_status()

        deadline = time.monotonic() + 300
        while client.get("/api/v1/status").json().get("pages", 0) < len(corpus):
            if time.monotonic() > deadline:
                raise SystemExit("the wiki was never indexed")
            time.sleep(0.2)
        for text in texts[:WARMUP]:
            ask(text)
        times = []
        for text in texts:
            started = time.perf_counter()
            ask(text)
            times.append((time.perf_counter() - started) * 1000)
    p50 = statistics.median(times)
    print(f"ai-memory GET /api/v1/search: p50 {p50:.1f} ms, p95 {percentile(times, 0.95):.1f} ms")
    return p50


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
    print(f"ai-memory is {other / mine:.1f}x faster at p50")
