"""Timing ``ai-memory reindex`` and short commands as whole processes, start-up included.

Shared by ``bench_store.py`` and ``bench_vs_basic_memory.py``: the notes are the
deterministic corpus of ``bench_query.py`` (pages of ~336 words with
frontmatter, entities and links), written as markdown files into a fresh data
dir's wiki, and the command runs as a user runs it: the installed console script.
"""

from __future__ import annotations

import compileall
import os
import random
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.bench_query import page_texts, queries, vocabulary
from benchmarks.common import dir_size, free_port, fresh_data_dir
from benchmarks.side_by_side import write_notes

Corpus = list[tuple[str, str, dict[str, Any]]]


def notes(size: int, query_count: int = 0) -> tuple[Corpus, list[str]]:
    """The side-by-side corpus of ``size`` notes and ``query_count`` queries (seeded by size)."""
    rng = random.Random(size)
    words, weights = vocabulary(random.Random(size))
    corpus = page_texts(size, words, weights, rng)
    return corpus, queries(corpus, query_count, rng) if query_count else []


def ai_memory() -> list[str]:
    """The installed ``ai-memory`` script beside this Python, else ``python -m ai_memory``."""
    script = Path(sys.executable).parent / "ai-memory"
    return [str(script)] if script.exists() else [sys.executable, "-m", "ai_memory"]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}


def wiki_of(root: Path, name: str, corpus: Corpus) -> Path:
    """A fresh data dir whose wiki holds the corpus as files nothing has indexed yet."""
    data_dir = fresh_data_dir(root, name)
    write_notes(data_dir / "wiki" / "default" / "bench", corpus)
    return data_dir


def reindex_seconds(data_dir: Path, expected: int) -> float:
    """Wall time of ``ai-memory reindex`` from spawn to exit."""
    return reindex_run(data_dir, expected)[0]


def installed_bytecode() -> None:
    """Compile the package's modules as ``pip install`` does, so a command is timed as
    an installed one runs (with ``PYTHONDONTWRITEBYTECODE`` set, a checkout's modules
    would otherwise be compiled again at every start: ~0.05 s of each run)."""
    import ai_memory

    compileall.compile_dir(Path(ai_memory.__file__).parent, quiet=1)


def reindex_run(data_dir: Path, expected: int) -> tuple[float, float]:
    """Wall time of ``ai-memory reindex`` from spawn to exit, and the CPU time (user +
    system) of the command and every worker process it waited for."""
    installed_bytecode()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [*ai_memory(), "reindex", "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or f"reindexed {expected} files" not in done.stdout:
        raise SystemExit(f"reindex failed: {done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return elapsed, cpu


def corpus_bytes(data_dir: Path) -> int:
    return dir_size(data_dir / "wiki" / "default")


def index_bytes(data_dir: Path) -> int:
    """The database with its WAL and shared-memory files (not the backups beside them)."""
    return dir_size(data_dir / "db")


def command_ms(argv: list[str], runs: int = 10) -> float:
    """Median wall time of ``argv`` from spawn to exit, in ms, after one warm-up run."""
    times = []
    for i in range(runs + 1):
        started = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=clean_env())
        if i:
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def startup_rows(data_dir: Path) -> list[tuple[str, float]]:
    """Start-up of simple commands beside the bare interpreter's; ``status`` finds no
    server on its port and reads the index read-only, as it does when the server is down."""
    status = ["status", "--data-dir", str(data_dir), "--server", f"http://127.0.0.1:{free_port()}"]
    return [
        ("python -c pass", command_ms([sys.executable, "-c", "pass"])),
        ("ai-memory --help", command_ms([*ai_memory(), "--help"])),
        ("ai-memory status, server down", command_ms([*ai_memory(), *status])),
    ]
