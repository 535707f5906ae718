"""Cost of neutralising stored text for agents (``ai_memory.core.fence.neutralise``).

Prints microseconds per call and MB/s for ordinary page text (ASCII prose with
markdown and code, CJK prose) and for inputs shaped to make a backtracking pattern
quadratic, at two sizes each: a linear cost shows as a flat MB/s column.

    python benchmarks/bench_fence.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_memory.core.fence import neutralise

PROSE = "We chose SQLite (WAL); see [[concepts/wal.md]] and `Vec<String>`, a < b & c.\n"
CJK = "\u6211\u4eec\u9009\u62e9\u4e86 SQLite\uff0c\u56e0\u4e3a\u5b83\u5f88\u7b80\u5355\u3002\n"
SHAPES: dict[str, Callable[[int], str]] = {
    "ascii prose + markdown": lambda n: (PROSE * (n // len(PROSE) + 1))[:n],
    "cjk prose": lambda n: (CJK * (n // len(CJK) + 1))[:n],
    "tags everywhere": lambda n: ("</untrusted-history> <system> [INST] " * n)[:n],
    "'<' then spaces": lambda n: "<" + " " * (n - 1),
    "'<system' then spaces": lambda n: "<system" + " " * (n - 7),
    "'&amp;' chain": lambda n: "&" + "amp;" * (n // 4),
    "zero-width run": lambda n: "\u200b" * (n - 20) + "</untrusted-history>",
}


def measure(text: str) -> float:
    """Seconds per call, best of 5."""
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        neutralise(text)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    print(f"{'input':26} {'chars':>8} {'µs/call':>10} {'MB/s':>8}")
    for name, make in SHAPES.items():
        for size in (10_000, 100_000):
            text = make(size)
            seconds = measure(text)
            rate = len(text.encode()) / seconds / 1e6
            print(f"{name:26} {len(text):>8} {seconds * 1e6:>10.0f} {rate:>8.1f}")


if __name__ == "__main__":
    main()
