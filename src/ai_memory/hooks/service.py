"""The capture service: ingest with backpressure, follow-up work, session-start packets."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread

from ai_memory.core.clock import iso, now_iso, utc_now
from ai_memory.core.errors import AiMemoryError, Forbidden, NotFound, Saturated
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.hooks.brief import (
    BriefSource,
    build_packet,
    read_snapshot,
    read_source,
    shown_page_ids,
)
from ai_memory.hooks.capture_filter import CaptureFilter
from ai_memory.hooks.event_parser import EventParser, ItemResult, Undecided
from ai_memory.hooks.followup import LATE_EVENTS, UNWRITTEN, SessionFinisher
from ai_memory.hooks.handoffs import Viewer, claim_command, consumed_handoff
from ai_memory.hooks.ingest import (
    HookEvent,
    IngestOutcome,
    budget_param,
    common_params,
    given_session_id,
    store_command,
)
from ai_memory.hooks.ingest_access import owns_session, packet_access
from ai_memory.hooks.ingest_groups import IngestGroups
from ai_memory.hooks.project_aliases import ProjectAliases
from ai_memory.hooks.recap import anchor_text, claimed_note
from ai_memory.hooks.session_rows import IDLE_END
from ai_memory.hooks.sessions import (
    SessionKey,
    idle_sessions,
    newest_open_session,
    session_page_id,
    unwritten_pages,
)
from ai_memory.runtime import Runtime

if TYPE_CHECKING:
    from ai_memory.hooks.sanitize import Sanitizer
    from ai_memory.importers.on_start import StartBackfill

# Threads sanitizing at once: about the cores there are. More would only queue for the
# interpreter lock, and the event loop (every other request) with them.
SANITIZE_THREADS = 2
# Sessions that continue (not start afresh) take no new handoff.
NO_NEW_CLAIM = frozenset({"compact", "resume"})
# What an event the [ingest] lists drop is answered: accepted, so the client lets it go.
DROPPED = IngestOutcome(stored=True, ended=False)
QUEUE_FULL = "the hook ingest queue is full; retry shortly"


class HookService:
    def __init__(self, runtime: Runtime) -> None:
        settings = runtime.config.hooks
        self.runtime = runtime
        self.finisher = SessionFinisher(
            runtime.wiki,
            recent_limit=settings.page_observations,
            consolidate=runtime.config.consolidation.auto and runtime.config.llm.provider != "none",
        )
        self.limit = settings.queue_size
        self.in_flight = 0
        self.groups = IngestGroups(runtime.writer)  # concurrent events share a command
        self.cpu = anyio.CapacityLimiter(SANITIZE_THREADS)
        self.aliases = ProjectAliases(runtime.readers)  # renamed projects' old names
        capture = CaptureFilter(runtime.config.ingest)
        self.parser = EventParser(lambda: self.sanitizer, capture, self.aliases)
        self.backfill: StartBackfill | None = None
        if runtime.config.backfill.on_start:  # reads the agents' transcripts: off by default
            from ai_memory.importers.on_start import start_backfill

            self.backfill = start_backfill(self)

    @property
    def sanitizer(self) -> Sanitizer:
        """The runtime's, compiled by the first event or once the server's first answers
        are out (``Runtime.settle``), not before the server answers (~0.05 s of CPU)."""
        return self.runtime.sanitizer

    def start(self) -> None:
        """Start the follow-up worker and queue pages a crash left unwritten."""
        self.finisher.start()
        for key in self.runtime.readers.read(unwritten_pages):
            self.finisher.enqueue(key, UNWRITTEN)

    async def requeue_unwritten(self) -> int:
        """Queue ended sessions still without a page (their tries ran out); return how many."""
        keys = await self.runtime.readers.aread(unwritten_pages)
        for key in keys:
            self.finisher.enqueue(key, UNWRITTEN)
        return len(keys)

    async def stop(self) -> None:
        if self.backfill is not None:
            await self.backfill.stop()
        await self.finisher.stop()

    # -- ingest -----------------------------------------------------------------

    async def ingest(
        self,
        params: Mapping[str, str],
        raw: bytes,
        who: Principal | None = None,
        *,
        lone_request: bool = False,
    ) -> IngestOutcome:
        """Store the event of body ``raw`` as ``who``'s; return only after it committed.
        Raise Saturated when full, Forbidden when ``who`` may not write to its project or
        session. ``lone_request``: no other request is being answered (see
        :class:`IngestGroups`).

        Decoding, parsing and sanitizing are CPU work: they run in a worker thread, so a
        hostile payload never holds up the event loop (and every other request with it);
        a small body with nothing to redact is parsed in place (bounded work).
        """
        event = self.parser.in_place(params, raw)
        if isinstance(event, Undecided):
            event = await anyio.to_thread.run_sync(
                self.parser.parse, params, event, limiter=self.cpu
            )
        if event is None:
            return DROPPED
        (outcome,) = await self._store([event], who, lone_request)
        if outcome.refused is not None:
            raise Forbidden(outcome.refused)
        self._follow_up(event, outcome)
        return outcome

    async def ingest_batch(self, items: object, who: Principal | None = None) -> list[ItemResult]:
        """Every item of ``items`` (a request's raw body, or the decoded list) is answered
        on its own: 202, its 4xx (403: ``who`` may not store it), or 429 past the room left
        in the queue. The room goes to the earliest items, so a batch bigger than the queue
        is stored in part and its sender, resending from the first 429, keeps its order.
        A raw body is decoded on the worker thread that parses its items."""
        results: list[ItemResult | None] = []
        received = now_iso()
        parsed = await anyio.to_thread.run_sync(
            self.parser.items, items, results, received, limiter=self.cpu
        )
        room = max(0, self.limit - self.in_flight)
        for index, _ in parsed[room:]:
            full = Saturated(QUEUE_FULL)
            results[index] = ItemResult(index, full.http_status, full.to_dict())
        parsed = parsed[:room]
        if parsed:
            try:
                outcomes = await self._store([event for _, event in parsed], who)
            except AiMemoryError as exc:
                for index, _ in parsed:
                    results[index] = ItemResult(index, exc.http_status, exc.to_dict())
            else:
                for (index, event), outcome in zip(parsed, outcomes, strict=True):
                    if outcome.refused is not None:
                        refusal = Forbidden(outcome.refused)
                        results[index] = ItemResult(index, 403, refusal.to_dict())
                        continue
                    results[index] = ItemResult(index, 202)
                    self._follow_up(event, outcome)
        return [r for r in results if r is not None]

    async def _store(
        self, events: list[HookEvent], who: Principal | None, lone_request: bool = False
    ) -> list[IngestOutcome]:
        """One writer command for the events (a single one may share it with other requests'
        while the writer is busy); bounded by the ingest limit, never waiting."""
        if self.in_flight + len(events) > self.limit:
            raise Saturated(QUEUE_FULL)
        self.in_flight += len(events)
        try:
            if len(events) == 1:
                return await self.groups.store(events, who, lone_request=lone_request)
            future = self.runtime.writer.submit(store_command(events, who=who), timeout=0)
            return await asyncio.wrap_future(future)
        finally:
            self.in_flight -= len(events)

    def _follow_up(self, event: HookEvent, outcome: IngestOutcome) -> None:
        if outcome.ended or outcome.rewrite:
            obs = event.observation
            key = SessionKey(event.scope.workspace, event.scope.project, obs.session_id)
            self.finisher.enqueue(key, LATE_EVENTS if outcome.rewrite else "session-end")
        if self.backfill is not None and event.observation.kind == "session-start":
            self.backfill.consider(event.scope, event.observation.session_id)

    # -- sessions ---------------------------------------------------------------

    async def end_idle(self, idle_s: float) -> int:
        """Queue every session silent for ``idle_s`` seconds for ending; return how many."""
        before = iso(utc_now() - timedelta(seconds=idle_s))
        found = await self.runtime.readers.aread(lambda conn: idle_sessions(conn, before))
        for idle in found:  # ended only if still as found: a late real end wins
            self.finisher.enqueue(idle.key, IDLE_END, expect=idle.last_observation_id)
        return len(found)

    async def finalize(
        self, scope: Scope, *, agent: str | None, session_id: str | None, timeout: float = 30.0
    ) -> dict[str, Any]:
        """End ``session_id`` (or the agent's newest open session) and wait for its page."""
        scope = self.aliases.scope(scope)
        if session_id is None:
            session_id = await self.runtime.readers.aread(
                lambda conn: newest_open_session(conn, scope, agent)
            )
            if session_id is None:
                who = f" of agent {agent}" if agent else ""
                raise NotFound(f"no open session{who} in {scope}")
        key = SessionKey(scope.workspace, scope.project, session_id)
        self.finisher.enqueue(key, "finalized")
        done = await self.finisher.wait_for(key, timeout)
        pending = self.finisher.pending
        page_id = await self.runtime.readers.aread(lambda conn: session_page_id(conn, key))
        page = f"sessions/{session_id}.md" if page_id is not None else None
        return {
            "session_id": session_id,
            "page": page,
            "page_id": page_id,
            "done": done,
            "pending": pending,
        }

    # -- session start ------------------------------------------------------------

    async def session_start_packet(
        self, params: Mapping[str, str], who: Principal | None = None
    ) -> dict[str, Any]:
        """Claim the best handoff ``who`` may see (exactly once) and pack it with the brief.

        A session asking again gets the handoff it already claimed (its first answer may
        never have reached the agent). A resumed session claims nothing new; a start after
        a compaction gets the anchor of its own work instead (see :meth:`recap`). A caller
        who may only read the project claims nothing.
        """
        if params.get("source") == "compact":
            return await self.recap(params, brief=False, who=who)
        who = who or Principal.root()
        agent, cwd, scope, session_id, budget, asked = await self._packet_params(params)
        hidden, may_write = await self.runtime.readers.aread(
            lambda conn: packet_access(conn, who, scope, asked)
        )
        command = claim_command(
            scope,
            agent=agent,
            session_id=session_id,
            cwd=cwd,
            via="hook",
            claim_new=may_write and params.get("source") not in NO_NEW_CLAIM,
            viewer=Viewer.of(who),
        )
        _, handoff = await self.runtime.writer.run(
            command, timeout=self.runtime.config.store.write_timeout_s
        )
        stale = iso(utc_now() - timedelta(seconds=self.runtime.config.hooks.idle_end_s))
        source_data = await self.runtime.readers.aread(
            lambda conn: read_source(conn, scope, session_id, stale, owner=who.owner, hidden=hidden)
        )
        return self._reinforce(source_data, build_packet(scope, handoff, source_data, budget))

    async def recap(
        self, params: Mapping[str, str], *, brief: bool = True, who: Principal | None = None
    ) -> dict[str, Any]:
        """Re-ground a session: its own goal, prompts and changes (the anchor), the handoff
        it started from named in a line, a session left open, then the brief. Claims nothing.
        Only a session ``who`` owns is recapped from its observations."""
        who = who or Principal.root()
        _, _, scope, session_id, budget, asked = await self._packet_params(params)
        stale = iso(utc_now() - timedelta(seconds=self.runtime.config.hooks.idle_end_s))
        viewer = Viewer.of(who)

        def read(conn: Any) -> tuple[BriefSource, dict[str, Any] | None, Any]:
            hidden, _ = packet_access(conn, who, scope, asked)
            mine = session_id if session_id and owns_session(conn, who, scope, session_id) else None
            source = read_source(
                conn, scope, session_id, stale, pages=brief, owner=who.owner, hidden=hidden
            )
            snapshot = read_snapshot(conn, scope, mine) if mine else None
            claimed = consumed_handoff(conn, scope, mine, viewer) if mine else None
            return source, snapshot, claimed

        source, snapshot, claimed = await self.runtime.readers.aread(read)
        anchor = anchor_text(session_id or "", snapshot)
        if anchor is not None:
            anchor += claimed_note(claimed)
        elif claimed is not None:
            anchor = claimed_note(claimed)
        packet = build_packet(scope, None, source, budget, anchor=anchor)
        packet["handoff"] = claimed
        return self._reinforce(source, packet)

    async def brief(
        self, params: Mapping[str, str], who: Principal | None = None
    ) -> dict[str, Any]:
        """The project brief alone (a subagent's start): nothing claimed, nothing recovered."""
        caller = who or Principal.root()
        _, _, scope, _, budget, asked = await self._packet_params(params)
        stale = iso(utc_now())

        def read(conn: Any) -> BriefSource:
            hidden, _ = packet_access(conn, caller, scope, asked)
            return read_source(conn, scope, None, stale, owner=caller.owner, hidden=hidden)

        source = await self.runtime.readers.aread(read)
        source.recovery = None
        return self._reinforce(source, build_packet(scope, None, source, budget))

    def _reinforce(self, source: BriefSource, packet: dict[str, Any]) -> dict[str, Any]:
        """The brief pages shown count as read, like a search hit: the bump is throttled
        per page and queued for the writer without waiting, so the answer never waits."""
        self.runtime.retrieval.reinforcer.bump(shown_page_ids(source, packet))
        return packet

    async def _packet_params(
        self, params: Mapping[str, str]
    ) -> tuple[str, str | None, Scope, str | None, int, Scope]:
        """The packet's parameters; the scope an old project name leads to, and the one
        asked for (what a refusal names)."""
        agent, cwd, asked = await anyio.to_thread.run_sync(
            common_params, params, {}, self.sanitizer, limiter=self.cpu
        )
        scope = self.aliases.scope(asked)
        session_id = given_session_id(params, self.sanitizer)
        budget = budget_param(params.get("budget"), self.runtime.config.hooks.brief_chars)
        return agent, cwd, scope, session_id, budget, asked

    def stats(self) -> dict[str, Any]:
        return {
            "ingest_in_flight": self.in_flight,
            **self.groups.stats(),
            "pending_session_pages": self.finisher.pending,
            "session_pages_written": self.finisher.pages_written,
            "session_failures": self.finisher.failures,
        }
