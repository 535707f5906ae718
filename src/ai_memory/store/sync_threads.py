"""Threads that write and fsync files for the writer, at a few microseconds a file.

Every page a writer batch stages is written and fsynced on one of these threads
while the batch's SQL goes on. An executor's ``submit`` builds a ``Future`` (a
condition variable, its lock, a list of waiters) and a work item for each file,
and wakes a thread through them: on the writer thread, which holds the GIL for
all of it, that was a fifth of the time a page took. Here a task is a tuple on a
``SimpleQueue`` and its completion one plain lock, released when it is done.

Waking a sleeping thread is still the writer's dearest step per file: the kernel
tends to run the woken thread at once, on the writer's core, while the writer holds
the interpreter lock, so both switch twice for nothing. These threads therefore run
a few steps nicer than the writer (Linux, where a thread has a niceness of its own):
woken, they wait for a free core or the writer's next pause instead. Their work is
mostly waiting on the disk, so they lose nothing by it.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

_Task = tuple[Callable[..., None], tuple[Any, ...], "Done"]
NICER = 5  # how much nicer than the thread that starts them these threads run


class Done:
    """The completion of one task: :meth:`wait` blocks until it ran, then gives its error."""

    __slots__ = ("_lock", "error")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()
        self.error: BaseException | None = None

    def set(self, error: BaseException | None) -> None:
        """Mark it done (once), with its error if it failed."""
        self.error = error
        self._lock.release()

    def wait(self) -> BaseException | None:
        with self._lock:  # held until the task ran; released again for the next waiter
            return self.error

    def result(self) -> None:
        """Wait; raise the task's error if it failed."""
        error = self.wait()
        if error is not None:
            raise error


def wait_all(tasks: list[Done]) -> None:
    """Wait for every task; raise the first one's error once all are done."""
    errors = [task.wait() for task in tasks]
    for error in errors:
        if error is not None:
            raise error


class SyncThreads:
    """A fixed set of daemon threads, started at the first task, stopped by :meth:`close`."""

    def __init__(self, count: int, name: str) -> None:
        self._count = count
        self._name = name
        self._queue: SimpleQueue[_Task | None] = SimpleQueue()
        self._threads: list[threading.Thread] = []

    def submit(self, function: Callable[..., None], *args: Any) -> Done:
        if not self._threads:
            self._start()
        done = Done()
        self._queue.put((function, args, done))
        return done

    def close(self) -> None:
        for _ in self._threads:
            self._queue.put(None)
        for thread in self._threads:
            thread.join()
        self._threads = []

    def _start(self) -> None:
        for number in range(self._count):
            thread = threading.Thread(target=self._work, name=f"{self._name}_{number}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def _work(self) -> None:
        _be_nicer(NICER)
        while (task := self._queue.get()) is not None:
            function, args, done = task
            try:
                function(*args)
            except BaseException as exc:  # handed to the waiter, which raises it
                done.set(exc)
            else:
                done.set(None)
            del task, function, args, done


def _be_nicer(steps: int) -> None:
    """Raise the calling thread's niceness by ``steps`` (Linux only: elsewhere the call
    names a process, not a thread). Raising it needs no privilege; failing changes
    nothing but the scheduling."""
    if sys.platform != "linux":
        return
    me = threading.get_native_id()
    with contextlib.suppress(OSError):
        os.setpriority(os.PRIO_PROCESS, me, os.getpriority(os.PRIO_PROCESS, me) + steps)
