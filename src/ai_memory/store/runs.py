"""SQL of the maintenance cadence: when each scheduled task last started and finished.

It lives in the index so a restart knows what is overdue instead of starting over.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

RUNS = "SELECT task, started_at, finished_at, result FROM maintenance_runs"
UPSERT_STARTED = """
INSERT INTO maintenance_runs (task, started_at) VALUES (?, ?)
ON CONFLICT (task) DO UPDATE SET started_at = excluded.started_at
"""
UPSERT_FINISHED = """
INSERT INTO maintenance_runs (task, started_at, finished_at, result) VALUES (?, ?, ?, ?)
ON CONFLICT (task) DO UPDATE SET finished_at = excluded.finished_at, result = excluded.result
"""


def runs(conn: sqlite3.Connection) -> dict[str, dict[str, Any]]:
    return {
        row["task"]: {
            "started_at": row["started_at"],
            "finished_at": row["finished_at"],
            "result": json.loads(row["result"]),
        }
        for row in conn.execute(RUNS)
    }


def started(conn: sqlite3.Connection, task: str, at: str) -> None:
    conn.execute(UPSERT_STARTED, (task, at))


def finished(conn: sqlite3.Connection, task: str, at: str, result: dict[str, Any]) -> None:
    conn.execute(UPSERT_FINISHED, (task, at, at, json.dumps(result)))
