"""The single writer: one thread owns the only writing connection.

Callers submit commands (functions of a connection) to a bounded queue. The thread
runs every command waiting, up to a batch limit, in one transaction, each in its own
savepoint so one failing command does not undo its neighbours (group commit; one
alone needs none). A caller's future resolves only after the COMMIT, so a result
means the data is durable.

A savepoint per command is not free: releasing one makes the full-text index
flush the terms it holds, which cost a page write more than its FTS insert. So
neighbouring :class:`Rerunnable` commands (their only effects are on the
connection and in ``writer.files``) share one savepoint, and their files are
created on the sync threads; if any of them fails, that run is rolled back and
run again command by command, each in its own savepoint with its files created
at once, so a bad command still fails alone and its neighbours still commit.

Commands stage file changes through ``writer.files`` (only from inside a
command); they are published just before the COMMIT, and their folders are
fsynced while it runs: a batch is answered once both are done.

The WAL is copied back into the database outside the write transaction (see
``store/checkpoint.py``), so no COMMIT pays for a checkpoint; and Python's cyclic
garbage collector waits while a transaction holds the lock (a full collection in a
large process pauses every thread for tens of milliseconds), running between
transactions instead.
"""

from __future__ import annotations

import logging
import queue
import sqlite3
import threading
import time
from concurrent.futures import Future
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ai_memory.core.errors import Saturated, Unavailable
from ai_memory.core.json_bodies import collector_paused
from ai_memory.store.checkpoint import Checkpointer
from ai_memory.store.commands import Command, Rerunnable
from ai_memory.store.db import begin_at_once, connect_writer
from ai_memory.store.files import FileStage
from ai_memory.store.migrations import migrate
from ai_memory.store.settle import answer
from ai_memory.store.sync_threads import wait_all
from ai_memory.store.write_waits import WaitTracker
from ai_memory.store.writer_batch import Job, fail_pending, runs, start_clean

if TYPE_CHECKING:  # loaded by :meth:`Writer.run`: a reindex runs no event loop
    import asyncio

log = logging.getLogger(__name__)

T = TypeVar("T")


_STOP = object()


class Writer:
    """Owns the writing connection; see the module docstring for the protocol."""

    def __init__(
        self,
        db_path: Path,
        *,
        queue_size: int = 4096,
        max_batch: int = 512,
        synchronous: str = "normal",
    ) -> None:
        self.db_path = db_path
        self.max_batch = max_batch
        self._synchronous = synchronous
        self._queue: queue.Queue[Job | object] = queue.Queue(maxsize=queue_size)
        self._thread: threading.Thread | None = None
        self._accepting = False
        self._lock = threading.Lock()
        # Held by whoever runs a transaction on the connection: the writer thread, or a
        # caller running a command in place while the thread is idle (run_if_idle).
        self._running = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self.files = FileStage()
        self.checkpointer = Checkpointer(db_path)
        self.transactions = 0
        self.commands = 0
        # The longest a transaction held the write lock, in seconds: from the moment
        # BEGIN IMMEDIATE has the lock until COMMIT has released it.
        self.longest_hold_s = 0.0
        # How long each command waited from submit to starting (status, metrics).
        self.waits = WaitTracker()

    def start(self) -> None:
        """Open the connection, run migrations, then start the thread."""
        conn = connect_writer(self.db_path, self._synchronous)
        migrate(conn)
        conn.execute("PRAGMA wal_autocheckpoint=0")  # the checkpointer copies the WAL back
        conn.execute(f"PRAGMA journal_size_limit={self.checkpointer.limit_bytes}")
        self.checkpointer.start()
        self._accepting = True
        self._conn = conn
        self._thread = threading.Thread(
            target=self._run, args=(conn,), name="ai-memory-writer", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Refuse new commands, drain every accepted one, close the connection."""
        with self._lock:
            if not self._accepting:
                return
            self._accepting = False
        self._queue.put(_STOP)
        if self._thread is not None:
            self._thread.join()

    @property
    def backlog(self) -> int:
        return self._queue.qsize()

    @property
    def thread_cpu_s(self) -> float:
        """CPU seconds the writer thread has used (0 where the platform cannot say)."""
        ident = self._thread.ident if self._thread is not None else None
        try:
            return time.clock_gettime(time.pthread_getcpuclockid(ident)) if ident else 0.0
        except (AttributeError, OSError):
            return 0.0

    @property
    def oldest_wait_s(self) -> float:
        """How long the oldest command still queued has waited so far (0 when none): a
        writer stuck in one long transaction shows here before any wait is recorded."""
        with self._queue.mutex:
            head = self._queue.queue[0] if self._queue.queue else None
        return time.perf_counter() - head.submitted if isinstance(head, Job) else 0.0

    def submit(
        self,
        command: Command[T],
        *,
        timeout: float | None = 0.0,
        waiter: asyncio.Future[T] | None = None,
    ) -> Future[T]:
        """Queue ``command``; raise :class:`Saturated` if no room appears within ``timeout``.

        ``timeout=0`` never waits (ingest answers 429 at once); ``None`` waits forever.
        ``waiter`` (an asyncio future) is resolved on its loop with the result too.
        """
        with self._lock:
            if not self._accepting:
                raise Unavailable("the writer is shutting down")
            future: Future[T] = Future()
            job = Job(command, future, time.perf_counter(), waiter)
        try:
            if timeout == 0:
                self._queue.put_nowait(job)
            else:
                self._queue.put(job, timeout=timeout)
        except queue.Full:
            raise Saturated("the write queue is full; retry shortly") from None
        return future

    def run_if_idle(self, command: Command[T]) -> Future[T] | None:
        """Run ``command`` in a transaction of its own on the calling thread if the writer
        is idle (nothing queued, no transaction running, the WAL not due for a checkpoint,
        the database's write lock free at once); return its settled future, committed or
        failed as :meth:`submit`'s would be. None: it did not run (submit it instead).

        A lone request on an idle server is then stored without the two thread hand-offs
        of a queued command (waking the writer, the writer waking the caller), which cost
        it more than its SQL. The calling thread waits out the transaction (now and then
        an FTS5 segment merge of a few tens of milliseconds), so this is for small commands
        that stage no files, and not offered when every COMMIT waits for the disk
        (``synchronous = "full"``).
        """
        if self._synchronous == "full":
            return None
        if not self._queue.empty() or not self._running.acquire(blocking=False):
            return None
        try:
            conn = self._conn
            if conn is None or not self._accepting or self.checkpointer.overdue:
                return None
            if not begin_at_once(conn):
                return None
            future: Future[T] = Future()
            try:
                self._execute(conn, [Job(command, future, time.perf_counter())], begun=True)
            finally:
                if conn.in_transaction:  # never left holding the write lock
                    conn.execute("ROLLBACK")
            return future
        finally:
            self._running.release()

    def call(self, command: Command[T], *, timeout: float | None = 10.0) -> T:
        """Submit and wait for the committed result (or the command's error)."""
        return self.submit(command, timeout=timeout).result()

    async def run(self, command: Command[T], *, timeout: float | None = 0.0) -> T:
        """Submit from async code and await the committed result without blocking the loop."""
        import asyncio

        waiter: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        try:
            future = self.submit(command, timeout=0, waiter=waiter)
        except Saturated:
            if not timeout:
                raise
            # Waiting for room in the queue blocks, so it happens off the loop.
            future = await asyncio.to_thread(self.submit, command, timeout=timeout, waiter=waiter)
        try:
            return await waiter
        except asyncio.CancelledError:
            future.cancel()  # dropped unless it is running already
            raise

    def _run(self, conn: sqlite3.Connection) -> None:
        stopping = False
        try:
            while not stopping:
                first = self._queue.get()
                batch: list[Job] = []
                if first is _STOP:
                    stopping = True
                else:
                    assert isinstance(first, Job)
                    batch.append(first)
                while len(batch) < self.max_batch:
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if item is _STOP:
                        stopping = True
                        continue
                    assert isinstance(item, Job)
                    batch.append(item)
                if batch:
                    with self._running:
                        try:
                            self._execute(conn, batch)
                        except Exception as exc:  # never a batch left waiting, nor the thread
                            log.exception("write batch failed")
                            fail_pending(batch, exc)
                            start_clean(conn, self.files)
                # Let go of the finished jobs now, not when the next command arrives: a
                # command can close over a lot (the start-up check's set of every page).
                batch.clear()
                first = item = None
        finally:
            with self._running:  # not while a command runs in place
                self._conn = None
                self.checkpointer.stop()
                conn.close()  # the last connection to close copies the WAL back and removes it
            self.files.close()

    def _execute(self, conn: sqlite3.Connection, batch: list[Job], begun: bool = False) -> None:
        # A job whose caller gave up before it ran is dropped; once running it cannot be
        # cancelled any more, so every future below can be resolved safely.
        batch = [job for job in batch if job.future.set_running_or_notify_cancel()]
        if not batch:
            return
        if not begun and self.checkpointer.overdue:
            # Between transactions, so the lock is not held; the BEGIN below restarts the WAL.
            self.checkpointer.try_checkpoint(conn)
        with collector_paused():
            outcomes = self._transaction(conn, batch, begun)
        if outcomes is None:
            return
        self.checkpointer.notify()
        self.transactions += 1
        self.commands += len(batch)
        answer(
            (job.future, job.waiter, ok, value)
            for job, (ok, value) in zip(batch, outcomes, strict=True)
        )

    def _transaction(
        self, conn: sqlite3.Connection, batch: list[Job], begun: bool
    ) -> list[tuple[bool, Any]] | None:
        """Run the batch in one transaction (``begun`` already); ``None`` (every future
        failed) if it failed."""
        outcomes: list[tuple[bool, Any]] = []
        try:
            if not begun:
                conn.execute("BEGIN IMMEDIATE")
            began = time.perf_counter()
            if len(batch) == 1 and not isinstance(batch[0].command, Rerunnable):
                # Alone in its transaction, a command needs no savepoint: if it fails, the
                # transaction is rolled back whole (nothing else was in it).
                outcome = self._run_alone(conn, batch[0])
                if not outcome[0]:
                    return [outcome]
                outcomes.append(outcome)
            else:
                for run in runs(batch):
                    shared = isinstance(run[0].command, Rerunnable)
                    outcomes += (
                        self._run_shared(conn, run) if shared else [self._run_one(conn, run[0])]
                    )
            # Files are in place before the rows that describe them commit; their folders'
            # fsyncs run meanwhile, and nobody hears of the commit before they are done.
            folders = self.files.publish()
            try:
                conn.execute("COMMIT")
                self.longest_hold_s = max(self.longest_hold_s, time.perf_counter() - began)
            finally:
                wait_all(folders)
        except BaseException as exc:  # the transaction failed (or its files may not last)
            log.exception("write transaction failed")
            self.files.discard_since(0)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            answer((job.future, job.waiter, False, exc) for job in batch)
            return None
        return outcomes

    def _run_alone(self, conn: sqlite3.Connection, job: Job) -> tuple[bool, Any]:
        """The one command of its transaction: a failure rolls the transaction back."""
        self.waits.record(time.perf_counter() - job.submitted)
        mark = self.files.mark()
        try:
            return True, job.context.run(job.command, conn)
        except Exception as exc:
            self.files.discard_since(mark)
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return False, exc

    def _run_shared(self, conn: sqlite3.Connection, run: list[Job]) -> list[tuple[bool, Any]]:
        """Rerunnable commands under one savepoint; on any failure, again one by one."""
        now = time.perf_counter()
        for job in run:
            self.waits.record(now - job.submitted)
        conn.execute("SAVEPOINT shared")
        mark = self.files.mark()
        values: list[Any] = []
        try:
            with self.files.deferred_opens():
                for job in run:
                    values.append(job.context.run(job.command, conn))
            self.files.check_since(mark)  # a file that could not be created fails the run
        except Exception as exc:
            self.files.discard_since(mark)
            conn.execute("ROLLBACK TO shared")
            conn.execute("RELEASE shared")
            if len(run) == 1 and len(values) == 0:
                return [(False, exc)]  # it failed by itself: running it again would too
            return [self._run_one(conn, job, recorded=True) for job in run]
        conn.execute("RELEASE shared")
        return [(True, value) for value in values]

    def _run_one(
        self, conn: sqlite3.Connection, job: Job, *, recorded: bool = False
    ) -> tuple[bool, Any]:
        if not recorded:
            self.waits.record(time.perf_counter() - job.submitted)
        conn.execute("SAVEPOINT command")
        mark = self.files.mark()
        try:
            value = job.context.run(job.command, conn)
        except Exception as exc:
            self.files.discard_since(mark)
            conn.execute("ROLLBACK TO command")
            conn.execute("RELEASE command")
            return False, exc
        conn.execute("RELEASE command")
        return True, value
