"""What hostile frontmatter costs: parsing in process, and a refused write over HTTP.

Prints the time to parse (and refuse) the 307-byte alias bomb (6 levels of 9
aliases), a self-referencing anchor, 10,000 levels of nesting and a 64 KiB
block, then the round trip of a PUT carrying the bomb to a real server.

    python benchmarks/bench_frontmatter.py
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ai_memory.wiki.frontmatter import parse_markdown
from ai_memory.wiki.limits import MAX_FRONTMATTER_BYTES
from benchmarks.common import Server, fresh_data_dir


def alias_bomb(levels: int = 6, width: int = 9) -> str:
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * width) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


CASES = {
    "alias bomb (6 x 9)": alias_bomb(),
    "self-reference a: &a [*a]": "---\na: &a [*a]\n---\nbody\n",
    "10,000 levels of [": "---\na: " + "[" * 10_000 + "]" * 10_000 + "\n---\nbody\n",
    "64 KiB block of short keys": "---\n"
    + "".join(f"k{i}: v{i}\n" for i in range(MAX_FRONTMATTER_BYTES // 14))
    + "---\nbody\n",
}


def best_of(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    for name, text in CASES.items():
        seconds = best_of(5, partial(parse_markdown, text))
        error = parse_markdown(text).error or "accepted"
        print(f"{name:30} {len(text.encode()):>7} bytes  {seconds * 1000:8.2f} ms  {error[:60]}")
    with tempfile.TemporaryDirectory() as tmp, Server(fresh_data_dir(Path(tmp), "d")) as server:
        with server.client() as http:
            url = "/api/v1/projects/default/bench/pages/notes/bomb.md"
            start = time.perf_counter()
            response = http.put(url, json={"body": alias_bomb()})
            took = time.perf_counter() - start
        print(f"PUT alias bomb over HTTP: {response.status_code} in {took * 1000:.1f} ms")


if __name__ == "__main__":
    main()
