"""The sync threads run their tasks, hand back failures, and yield to the writer."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from ai_memory.store.sync_threads import NICER, SyncThreads, wait_all


def test_tasks_run_and_the_first_failure_is_raised_once_all_are_done() -> None:
    pool = SyncThreads(2, "test-sync")
    ran: list[int] = []

    def task(n: int) -> None:
        ran.append(n)
        if n == 1:
            raise ValueError("one failed")

    try:
        with pytest.raises(ValueError, match="one failed"):
            wait_all([pool.submit(task, n) for n in range(4)])
        assert sorted(ran) == [0, 1, 2, 3]
    finally:
        pool.close()


@pytest.mark.skipif(sys.platform != "linux", reason="threads have a niceness of their own")
def test_the_threads_run_nicer_than_the_one_that_starts_them() -> None:
    pool = SyncThreads(1, "test-sync")
    seen: list[int] = []

    def niceness() -> None:
        seen.append(os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))

    try:
        pool.submit(niceness).result()
    finally:
        pool.close()
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert seen == [min(mine + NICER, 19)]
