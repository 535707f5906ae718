"""What one hook event's COMMIT writes: WAL pages per b-tree and the writer's CPU per event.

The ingest command of the tree on ``PYTHONPATH`` (this checkout without one) stores
one event per transaction, as one client posting one event at a time makes the
writer do, into a database already holding ``--sessions`` sessions of ten events
each; the WAL is then read frame by frame and each page named by the b-tree it
belongs to (SQLite's ``dbstat``). Run it on a baseline tree and on this one, in
turns, to compare:

    git archive <rev> src | tar -x -C /tmp/baseline
    PYTHONPATH=/tmp/baseline/src python benchmarks/bench_ingest_wal.py
    python benchmarks/bench_ingest_wal.py [--events 2000] [--sessions 2000]
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sqlite3
import struct
import tempfile
from pathlib import Path

from ai_memory.hooks.ingest import HookEvent, parse_event, store_command
from ai_memory.hooks.sanitize import Sanitizer
from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import SCHEMA_VERSION, migrate

FRAME_HEADER = 24
WAL_HEADER = 32


def event(sanitizer: Sanitizer, session: str, i: int) -> HookEvent:
    params = {
        "project": "bench",
        "agent": "claude-code",
        "event": "PostToolUse",
        "session_id": session,
        "ingest_key": f"{session}-{i}",
    }
    body = {
        "tool_name": "Bash",
        "tool_input": {"command": f"make test {i}"},
        "tool_response": {"stdout": "ok " * 40},
    }
    return parse_event(params, body, sanitizer)


def wal_pages(wal: Path, page_size: int) -> list[int]:
    data = wal.read_bytes()
    pages, offset = [], WAL_HEADER
    while offset + FRAME_HEADER + page_size <= len(data):
        pages.append(struct.unpack(">I", data[offset : offset + 4])[0])
        offset += FRAME_HEADER + page_size
    return pages


def owners(conn: sqlite3.Connection) -> dict[int, str]:
    try:
        return {
            int(page): str(name) for name, page in conn.execute("SELECT name, pageno FROM dbstat")
        }
    except sqlite3.OperationalError:  # SQLite built without dbstat: totals only
        return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", type=int, default=2000)
    parser.add_argument("--sessions", type=int, default=2000)
    args = parser.parse_args()
    sanitizer = Sanitizer()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "memory.sqlite"
        conn = connect_writer(db)
        migrate(conn)
        conn.execute("PRAGMA wal_autocheckpoint=0")
        conn.execute("BEGIN IMMEDIATE")
        for s in range(args.sessions):
            store_command([event(sanitizer, f"old-{s}", i) for i in range(10)])(conn)
        conn.execute("COMMIT")
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        events = [event(sanitizer, "live-1", i) for i in range(args.events)]
        before = resource.getrusage(resource.RUSAGE_SELF)
        for one in events:
            conn.execute("BEGIN IMMEDIATE")
            store_command([one])(conn)
            conn.execute("COMMIT")
        after = resource.getrusage(resource.RUSAGE_SELF)
        page_size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        pages = wal_pages(Path(f"{db}-wal"), page_size)
        names = owners(conn)
        conn.close()
    n = len(events)
    user = (after.ru_utime - before.ru_utime) * 1e6 / n
    system = (after.ru_stime - before.ru_stime) * 1e6 / n
    source = os.environ.get("PYTHONPATH") or "this checkout"
    print(f"schema {SCHEMA_VERSION} ({source}), {args.sessions} sessions stored before")
    print(
        f"one event per COMMIT: {len(pages) / n:5.1f} WAL pages, writer CPU {user + system:4.0f}"
        f" µs/event (user {user:.0f}, sys {system:.0f}); load {os.getloadavg()[0]:.2f}"
    )
    counts = collections.Counter(
        names.get(p, "other (free list, pointer map, header)") for p in pages
    )
    for name, count in counts.most_common():
        print(f"  {count / n:5.2f}  {name}")


if __name__ == "__main__":
    main()
