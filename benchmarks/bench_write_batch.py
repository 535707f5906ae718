"""What a page batch saves an importer, and what a message costs against a page write.

    python benchmarks/bench_write_batch.py [--pages 100] [--rounds 5] [--messages 200]

A real server on a fresh data dir. Each round writes ``--pages`` new pages into a
project of its own twice, interleaved so load drifts alike: one ``PUT`` per page, then
one ``PUT …/pages:batch`` with all of them. Then ``--messages`` sends and as many pops
between two projects, beside as many single page writes. It prints the medians, the
ratios and the load average.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from benchmarks.common import Server, fresh_data_dir, words


def pages(rng: random.Random, count: int) -> list[dict[str, str]]:
    return [{"path": f"imported/p{n:04}.md", "body": words(rng, 120)} for n in range(count)]


def ensure(http: httpx.Client, project: str) -> None:
    put = http.put(f"/api/v1/projects/default/{project}/pages/index.md", json={"body": "# x"})
    put.raise_for_status()


def one_by_one(http: httpx.Client, project: str, batch: list[dict[str, str]]) -> float:
    started = time.perf_counter()
    for page in batch:
        url = f"/api/v1/projects/default/{project}/pages/{page['path']}"
        http.put(url, json={"body": page["body"]}).raise_for_status()
    return (time.perf_counter() - started) * 1000


def batched(http: httpx.Client, project: str, batch: list[dict[str, str]]) -> float:
    started = time.perf_counter()
    url = f"/api/v1/projects/default/{project}/pages:batch"
    http.put(url, json={"pages": batch}).raise_for_status()
    return (time.perf_counter() - started) * 1000


def per_call(calls: int, action: object) -> float:
    """Median milliseconds of ``calls`` runs of ``action`` (a callable)."""
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as tmp, Server(fresh_data_dir(Path(tmp), "d")) as srv:
        http = srv.client()
        single, whole = [], []
        for n in range(args.rounds):
            batch = pages(rng, args.pages)
            for project in (f"one-{n}", f"batch-{n}"):
                ensure(http, project)
            single.append(one_by_one(http, f"one-{n}", batch))
            whole.append(batched(http, f"batch-{n}", batch))
        for project in ("from", "to"):
            ensure(http, project)
        message = {"project": "from", "to_project": "to", "subject": "s", "body": words(rng, 60)}
        counter = iter(range(10**9))
        write = per_call(
            args.messages,
            lambda: http.put(
                f"/api/v1/projects/default/from/pages/w{next(counter)}.md",
                json={"body": message["body"]},
            ).raise_for_status(),
        )
        send = per_call(
            args.messages, lambda: http.post("/api/v1/messages", json=message).raise_for_status()
        )
        pop = per_call(
            args.messages,
            lambda: http.post("/api/v1/messages/pop", json={"project": "to"}).raise_for_status(),
        )
    one, all_ = statistics.median(single), statistics.median(whole)
    print(f"{args.pages} pages, {args.rounds} rounds (median ms per round)")
    print(f"  one PUT per page : {one:8.1f}")
    print(f"  one batch        : {all_:8.1f}   ({one / all_:.1f}x faster)")
    print(f"{args.messages} calls each (median ms per call)")
    print(f"  page write       : {write:8.2f}")
    print(f"  message send     : {send:8.2f}   ({send / write:.2f}x a page write)")
    print(f"  message pop      : {pop:8.2f}   ({pop / write:.2f}x a page write)")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
