"""The learning loop's tick in ``serve``: one new completed session per project per tick.

Each project keeps a watermark (the end time and id of the last session reviewed);
the first start ever marks every existing project reviewed up to that moment, so an
upgrade never sends a project's whole history to a provider. Without a provider a
tick does nothing. A provider that cannot answer leaves the watermark where it was
(the session is tried again next tick); an answer that does not hold up moves past
it, so one bad session cannot stall a project.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from ai_memory.config_llm import LearningSettings
from ai_memory.consolidate.pending import approve
from ai_memory.consolidate.review import ReviewReport, require_chat, review_session
from ai_memory.core.errors import AiMemoryError, LlmUnavailable, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.hooks.observations import owner_args, require_own_session
from ai_memory.store import pending_writes as store
from ai_memory.wiki.wiki import Wiki

if TYPE_CHECKING:
    from ai_memory.llm.chat import Chat

log = logging.getLogger(__name__)
# What a provider answers to the request itself (too long for the model, say), not to
# the key or the model: the same session would be refused again at every tick.
REQUEST_REFUSED = frozenset({"http_400", "http_413", "http_422"})


async def improve(
    wiki: Wiki,
    chat: Chat | None,
    settings: LearningSettings,
    scope: Scope,
    session_id: str,
    *,
    dry_run: bool = False,
    by: str = "learning",
) -> ReviewReport:
    """Review one session; with ``require_approval = false`` apply what it proposed."""
    report = await review_session(wiki, chat, settings, scope, session_id, dry_run=dry_run)
    if dry_run or settings.require_approval:
        return report
    for proposal in report.proposals:
        try:
            decided = await asyncio.to_thread(approve, wiki, proposal["id"], by)
            proposal.update(state=decided["state"], result_page_id=decided["result_page_id"])
        except AiMemoryError as exc:  # refused: the row says why
            proposal.update(state="refused", error=exc.message)
    return report


async def improve_now(
    wiki: Wiki,
    chat: Chat | None,
    settings: LearningSettings,
    scope: Scope,
    session_id: str | None,
    dry_run: bool,
    who: Principal | None = None,
) -> ReviewReport:
    """On request (HTTP, MCP): one session, by default the latest completed one ``who``
    owns (any owner's for the operator and admins); the watermark is the tick's and
    stays where it is."""
    provider = require_chat(chat)
    if session_id is None:
        latest = partial(store.latest_session, scope=scope, owner=owner_args(who))
        session_id = await wiki.readers.aread(latest)
        if session_id is None:
            raise NotFound(f"no completed session in {scope} to review")
    else:
        mine = partial(require_own_session, who=who, scope=scope, session_id=session_id)
        await wiki.readers.aread(mine)
    return await improve(wiki, provider, settings, scope, session_id, dry_run=dry_run)


class LearningLoop:
    """An asyncio task; ``chat`` is read at each tick (the provider may be set later)."""

    def __init__(
        self,
        wiki: Wiki,
        settings: LearningSettings,
        chat: Callable[[], Chat | None],
    ) -> None:
        self.wiki = wiki
        self.settings = settings
        self.chat = chat
        self.ticks = 0
        self.last_tick_at: str | None = None
        self._task: asyncio.Task[None] | None = None

    def status(self) -> dict[str, Any]:
        """The status section: the cadence, the last tick, how many proposals wait."""
        waiting = self.wiki.readers.read(store.count_pending)  # an index range, not a scan
        return {
            "require_approval": self.settings.require_approval,
            "interval_h": self.settings.interval_h,
            "ticks": self.ticks,
            "last_tick_at": self.last_tick_at,
            "pending_writes": waiting,
        }

    def start(self) -> None:
        if self.settings.interval_h > 0:
            self._task = asyncio.create_task(self._loop(), name="ai-memory-learning")

    async def stop(self) -> None:
        if self._task is None:
            return
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def seed(self) -> bool:
        now = self.wiki.clock()
        return await self.wiki.writer.run(lambda conn: store.seed_watermarks(conn, now))

    async def tick(self) -> list[dict[str, Any]]:
        """One round over every project; what each reviewed session gave."""
        chat = self.chat()
        if chat is None:
            return []
        await self.seed()
        self.ticks += 1
        self.last_tick_at = self.wiki.clock()
        done: list[dict[str, Any]] = []
        for scope in await self.wiki.readers.aread(store.projects):
            found = await self.wiki.readers.aread(partial(store.next_session, scope=scope))
            if found is None:
                continue
            session_id, ended_at = found
            try:
                report = await improve(self.wiki, chat, self.settings, scope, session_id)
                done.append(report.to_dict())
            except AiMemoryError as exc:
                # Every candidate down, or a key or model refused: try again later. A bad
                # answer or a refused request would come again at every tick: passed.
                refused = exc.details.get("reason") in REQUEST_REFUSED
                if isinstance(exc, LlmUnavailable) and not refused:
                    log.warning("learning: no provider answered; %s waits for the next tick", scope)
                    continue
                log.warning("learning: session %s of %s: %s", session_id, scope, exc.message)
                done.append({"session_id": session_id, "error": exc.message})
            await self.wiki.writer.run(
                partial(store.set_watermark, scope=scope, ended_at=ended_at, session_id=session_id)
            )
        return done

    async def _loop(self) -> None:
        if self.chat() is not None:
            await self.seed()  # history before the first start with a provider stays unread
        while True:
            await asyncio.sleep(self.settings.interval_h * 3600)
            try:
                await self.tick()
            except Exception:
                log.exception("learning tick failed")
