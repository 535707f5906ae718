"""Threads that write and fsync files for the writer, at a few microseconds a file.

Every page a writer batch stages is written and fsynced on one of these threads
while the batch's SQL goes on. An executor's ``submit`` builds a ``Future`` (a
condition variable, its lock, a list of waiters) and a work item for each file,
and wakes a thread through them: on the writer thread, which holds the GIL for
all of it, that was a fifth of the time a page took. Here a task is a tuple on a
``SimpleQueue`` and its completion one plain lock, released when it is done.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from queue import SimpleQueue
from typing import Any

_Task = tuple[Callable[..., None], tuple[Any, ...], "Done"]


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

    def run_all(self, function: Callable[[Any], None], items: list[Any]) -> None:
        """``function`` of every item at once; raise the first error once all are done."""
        wait_all([self.submit(function, item) for item in items])

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
        while (task := self._queue.get()) is not None:
            function, args, done = task
            try:
                function(*args)
            except BaseException as exc:  # handed to the waiter, which raises it
                done.set(exc)
            else:
                done.set(None)
            del task, function, args, done
