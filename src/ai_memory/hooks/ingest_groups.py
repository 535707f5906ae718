"""Single hook events of concurrent requests, stored by one writer command.

Each writer command costs a job, a future, a savepoint, the access and project
checks, and a wake-up of the event loop when it commits, whatever it stores.
Sixteen agents posting one event each paid all of that sixteen times per
transaction. Here, while ``max_running`` commands are on their way to the writer,
the events that arrive wait and then go together as one command (one per caller
who acts), answered each with its own outcome once that command committed: a
lone client is not held back (nothing is in flight when it posts), a busy server
stores many events per command.

A group that fails for a reason of its own (not a full queue or a stopping
writer) is stored again event by event, so one bad event fails alone, as it did
when each had its own command. Session ends never wait in a group: their
follow-up work keys on the session row each leaves behind.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Sequence
from dataclasses import dataclass, field

from ai_memory.core.errors import AiMemoryError
from ai_memory.core.principal import Principal
from ai_memory.hooks.ingest import HookEvent
from ai_memory.hooks.ingest_store import IngestOutcome, store_command
from ai_memory.store.acting import acting
from ai_memory.store.writer import Writer

# Commands on their way at once: one committing while the next one waits in the queue.
MAX_RUNNING = 2
# Events in one command at most (a /hook/batch holds 256).
MAX_GROUP = 512
# Text an event stored in place may hold: its full-text row and the index merges it
# sets off run on the event loop, so a long prompt (15 KiB: /healthz p99 34-36 ms
# against 6-7 ms queued) goes to the writer thread.
IN_PLACE_CHARS = 2048
Key = tuple[Principal | None, Principal]


@dataclass(slots=True)
class _Waiting:
    events: Sequence[HookEvent]
    future: asyncio.Future[list[IngestOutcome]]
    context: contextvars.Context = field(default_factory=contextvars.copy_context)


class IngestGroups:
    """Stores events through ``writer``, grouping those that arrive while it is busy."""

    def __init__(
        self, writer: Writer, *, max_running: int = MAX_RUNNING, max_group: int = MAX_GROUP
    ) -> None:
        self.writer = writer
        self.max_running = max_running
        self.max_group = max_group
        self.running = 0
        self.commands = 0  # writer commands submitted, for the stats
        self.events = 0  # events they stored
        self._pending: dict[Key, list[_Waiting]] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # held until done (the loop holds weakly)

    async def store(
        self, events: Sequence[HookEvent], who: Principal | None, *, lone_request: bool = False
    ) -> list[IngestOutcome]:
        """The events' outcomes once committed (alone or with others); raise what the writer
        raised (Saturated when its queue is full). ``lone_request``: theirs is the only
        request the server is answering, so they may be stored in place (see
        :meth:`Writer.run_if_idle`) when nothing else is on its way to the writer."""
        if lone_request and not self.running and not self._pending and _small(events):
            stored = self._in_place(events, who)
            if stored is not None:
                return stored
        alone = any(event.observation.kind == "session-end" for event in events)
        if alone or (self.running < self.max_running and not self._pending):
            self.running += 1
            try:
                return await self._submit(events, who)
            finally:
                self.running -= 1
                self._flush()
        waiting = _Waiting(events, asyncio.get_running_loop().create_future())
        self._pending.setdefault((who, acting()), []).append(waiting)
        return await waiting.future

    def _in_place(
        self, events: Sequence[HookEvent], who: Principal | None
    ) -> list[IngestOutcome] | None:
        """The events stored on this thread, if the writer was idle; None if it was not."""
        done = self.writer.run_if_idle(store_command(events, who=who))
        if done is None:
            return None
        self.commands += 1
        self.events += len(events)
        return done.result()

    async def _submit(
        self, events: Sequence[HookEvent], who: Principal | None
    ) -> list[IngestOutcome]:
        # Answered through ``waiter``: the writer wakes this loop once for its whole batch and
        # resolves the future in place (``wrap_future`` chains a second future, copied over).
        waiter: asyncio.Future[list[IngestOutcome]] = asyncio.get_running_loop().create_future()
        future = self.writer.submit(store_command(events, who=who), timeout=0, waiter=waiter)
        self.commands += 1
        self.events += len(events)
        try:
            return await waiter
        except asyncio.CancelledError:
            future.cancel()  # dropped unless it is running already
            raise

    def _flush(self) -> None:
        """Send what waits, one group per caller, while there is room."""
        while self._pending and self.running < self.max_running:
            key = next(iter(self._pending))
            queued = self._pending[key]
            group: list[_Waiting] = []
            size = 0
            while queued and (not group or size + len(queued[0].events) <= self.max_group):
                waiting = queued.pop(0)
                if not waiting.future.done():  # its request was cancelled meanwhile
                    group.append(waiting)
                    size += len(waiting.events)
            if not queued:
                del self._pending[key]
            if not group:
                continue
            self.running += 1
            # In the first caller's context: every caller of a group acts as the same one.
            task = asyncio.get_running_loop().create_task(
                self._run(key[0], group), context=group[0].context
            )
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _run(self, who: Principal | None, group: list[_Waiting]) -> None:
        try:
            await self._answer(who, group)
        finally:
            for waiting in group:  # a cancelled group answers nothing: its callers retry
                if not waiting.future.done():
                    waiting.future.cancel()
            self.running -= 1
            self._flush()

    async def _answer(self, who: Principal | None, group: list[_Waiting]) -> None:
        events = [event for waiting in group for event in waiting.events]
        try:
            outcomes = await self._submit(events, who)
        except AiMemoryError as exc:  # a full queue, a stopping writer: the same for all
            for waiting in group:
                _settle(waiting, exc)
            return
        except Exception as exc:
            if len(group) == 1:
                _settle(group[0], exc)
                return
            for waiting in group:  # one of them failed it: each on its own again
                try:
                    _settle(waiting, await self._submit(waiting.events, who))
                except Exception as own:
                    _settle(waiting, own)
            return
        start = 0
        for waiting in group:
            _settle(waiting, outcomes[start : start + len(waiting.events)])
            start += len(waiting.events)

    def stats(self) -> dict[str, int]:
        return {"ingest_commands": self.commands, "ingest_events": self.events}


def _settle(waiting: _Waiting, result: list[IngestOutcome] | BaseException) -> None:
    if waiting.future.done():
        return
    if isinstance(result, BaseException):
        waiting.future.set_exception(result)
    else:
        waiting.future.set_result(result)


def _small(events: Sequence[HookEvent]) -> bool:
    return sum(len(event.observation.body) for event in events) <= IN_PLACE_CHARS
