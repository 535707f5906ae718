"""The writer measures how long each write waited in its queue, from submit to starting."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from ai_memory.metrics.status import writer_waits
from ai_memory.store.write_waits import BUCKETS, WaitTracker
from ai_memory.store.writer import Writer

HELD_S = 0.2


def test_a_write_queued_behind_a_slow_one_reports_its_wait(tmp_path: Path) -> None:
    writer = Writer(tmp_path / "db.sqlite")
    writer.start()
    release = threading.Event()
    try:
        started = threading.Event()

        def slow(conn: sqlite3.Connection) -> None:
            started.set()
            release.wait(10)

        first = writer.submit(slow)
        assert started.wait(10)
        queued_at = time.perf_counter()
        second = writer.submit(lambda conn: conn.execute("SELECT 1").fetchone()[0])
        assert writer.backlog == 1
        time.sleep(HELD_S)
        assert writer.oldest_wait_s >= HELD_S  # seen while it still waits
        assert writer_waits(writer).longest_recent_s >= HELD_S
        release.set()
        first.result(10)
        assert second.result(10) == 1
        waited = time.perf_counter() - queued_at
    finally:
        release.set()
        writer.stop()
    assert writer.oldest_wait_s == 0.0  # nothing queued any more
    waits = writer.waits.snapshot()
    assert waits.count == 2 and sum(waits.buckets) == 2
    # The second write could not start before the first let go of the writer.
    assert HELD_S <= waits.longest_recent_s <= waited
    assert waits.sum_s >= waits.longest_recent_s


def test_the_tracker_keeps_the_longest_of_its_window_and_counts_every_wait() -> None:
    tracker = WaitTracker(window_s=300)
    tracker.record(0.004, now=1000.0)
    tracker.record(3.0, now=1000.5)  # the longest, in the same second
    tracker.record(0.0001, now=1001.0)
    tracker.record(60.0, now=1002.0)  # longer than every bucket
    assert tracker.snapshot(now=1100.0).longest_recent_s == 60.0
    assert tracker.snapshot(now=1301.5).longest_recent_s == 60.0
    assert tracker.snapshot(now=1302.5).longest_recent_s == 0.0  # all older than the window
    counts = tracker.snapshot(now=1302.5).buckets
    assert len(counts) == len(BUCKETS) + 1 and sum(counts) == 4
    assert counts[BUCKETS.index(0.0005)] == 1 and counts[BUCKETS.index(0.005)] == 1
    assert counts[BUCKETS.index(10.0)] == 1 and counts[-1] == 1  # 3 s, then 60 s


def test_the_tracker_stays_bounded() -> None:
    tracker = WaitTracker(window_s=10)
    for second in range(10_000):
        tracker.record(0.001, now=float(second))
    assert len(tracker._recent) <= 11
    assert tracker.snapshot(now=10_000.0).count == 10_000
