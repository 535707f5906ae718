"""Work that follows an answered hook: session pages and handoffs, one session at a time.

The hook answer never waits for this; ``flush`` lets a caller wait until
every session ended so far has its page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable

from ai_memory.hooks.sessions import EndResult, SessionKey, end_session
from ai_memory.wiki.wiki import Wiki

log = logging.getLogger(__name__)
RETRIES = 5
# Late events told to an ended session: its page is written again to hold them, and
# nothing else (see ``end_session(page_only=True)``). A new handoff would be dated now
# and take the place of newer sessions' (or be claimed a second time).
LATE_EVENTS = "late-events"
# An ended session found without its page (its end's tries ran out, or a crash): its end
# again, unless its page is there by the time it runs (an end that was running wrote it).
UNWRITTEN = "page-unwritten"


class SessionFinisher:
    def __init__(self, wiki: Wiki, *, recent_limit: int = 50, consolidate: bool = False) -> None:
        self.wiki = wiki
        self.recent_limit = recent_limit
        self.consolidate = consolidate  # queue each ended session's consolidation job
        self._queue: asyncio.Queue[SessionKey] = asyncio.Queue()
        self._pending: set[SessionKey] = set()
        # What each queued session is to get: (reason, last observation an idle end expects).
        self._wanted: dict[SessionKey, tuple[str, int | None]] = {}
        self._idle = asyncio.Event()
        self._idle.set()
        self._task: asyncio.Task[None] | None = None
        self._failed: dict[SessionKey, int] = {}
        self._done: dict[SessionKey, asyncio.Event] = {}
        self.pages_written = 0
        self.failures = 0
        self.on_end: Callable[[EndResult], None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="ai-memory-session-finisher")

    async def stop(self) -> None:
        """Finish what is queued (bounded), then stop."""
        try:
            await asyncio.wait_for(self.flush_wait(), timeout=30)
        except TimeoutError:
            log.warning("stopping with %d session(s) still to finish", len(self._pending))
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    @property
    def pending(self) -> int:
        return len(self._pending)

    def enqueue(
        self, key: SessionKey, reason: str = "session-end", expect: int | None = None
    ) -> None:
        """Queue a session for ending; a session already queued is not queued twice.

        ``expect`` makes it an idle end (see :func:`end_session`); a real end queued
        while an idle end still waits takes its place.
        """
        if key in self._pending:
            self._want(key, reason, expect)
            return
        self._pending.add(key)
        self._wanted[key] = (reason, expect)
        self._done.setdefault(key, asyncio.Event())
        self._idle.clear()
        self._queue.put_nowait(key)

    async def wait_for(self, key: SessionKey, timeout: float) -> bool:
        """Wait until ``key`` is no longer queued (or ``timeout``); True when it is done."""
        done = self._done.get(key)
        if done is None:
            return True
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(done.wait(), timeout=timeout)
        return key not in self._pending

    async def flush_wait(self) -> None:
        await self._idle.wait()

    async def flush(self, timeout: float) -> int:
        """Wait until nothing is queued (or ``timeout``); return what is still pending."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), timeout=timeout)
        return self.pending

    def _retry_later(self, key: SessionKey, reason: str, expect: int | None) -> None:
        """A busy writer is no reason to lose a page: try again a few times, later.

        Only this session waits; after the last try the scheduler's scan for ended
        sessions without a page picks it up again.
        """
        attempts = self._failed.get(key, 0) + 1
        if attempts > RETRIES:
            self._failed.pop(key, None)
            return
        self._failed[key] = attempts
        if key in self._pending:  # queued again meanwhile: that run does it, wanting the most
            self._want(key, reason, expect)
            return
        self._pending.add(key)
        self._wanted[key] = (reason, expect)
        self._idle.clear()
        delay = min(2.0 * attempts, 10.0)
        asyncio.get_running_loop().call_later(delay, self._queue.put_nowait, key)

    def _want(self, key: SessionKey, reason: str, expect: int | None) -> None:
        """What a session already queued is to get: the more of two wishes (an idle end
        yields to the end of a session found without its page, then to a page rewrite for
        late events, then to a real end)."""
        current = self._wanted.get(key)
        if current is None or _rank(reason, expect) > _rank(*current):
            self._wanted[key] = (reason, expect)

    def _settled(self, key: SessionKey) -> None:
        if key not in self._pending:
            done = self._done.pop(key, None)
            if done is not None:
                done.set()
        if not self._pending:
            self._idle.set()

    async def _run(self) -> None:
        while True:
            key = await self._queue.get()
            # Taken off the pending set first: an event arriving while the page is
            # being written queues the session again, so nothing is missed.
            self._pending.discard(key)
            if key not in self._wanted:  # queued twice, and done already
                self._settled(key)
                continue
            reason, expect = self._wanted.pop(key)
            try:
                result = await asyncio.to_thread(
                    end_session,
                    self.wiki,
                    key,
                    reason=reason,
                    recent_limit=self.recent_limit,
                    expect=expect,
                    consolidate=self.consolidate,
                    page_only=reason == LATE_EVENTS,
                    if_unwritten=reason == UNWRITTEN,
                )
                if result is not None and result.page_id is not None:
                    self.pages_written += 1
                self._failed.pop(key, None)
            except Exception:
                self.failures += 1
                log.exception("could not end session %s", key)
                self._retry_later(key, reason, expect)
            self._settled(key)


def _rank(reason: str, expect: int | None) -> int:
    """How much a wish does: an idle end (it has ``expect``) 0, the end of a session found
    without its page 1, a page rewrite for late events 2 (it ends too, when the page is
    missing), a real end 3."""
    if expect is not None:
        return 0
    return {UNWRITTEN: 1, LATE_EVENTS: 2}.get(reason, 3)
