"""Delivering the spool: what the hooks spooled while the server was down or slow.

Every agent's hook client spools into ``<data_dir>/spool/``; without this, an event
spooled during a reboot or a crash waits for the next hook run of an agent that may
never run again. The drain reads the spool in-process (no HTTP to itself), through the
same ingest as ``POST /hook/batch``, and settles each file exactly as a hook client
would, so a hook client retrying the same files at the same time duplicates nothing:
every event keeps its ``ingest_key``.

Bounded: it takes the files present at start (at most ``limit``), in batches no bigger
than the ingest queue, retries a batch answered 429 a few times, and stops at its
deadline or at a batch still refused (no event goes before one captured earlier). Then
it looks again every ``recheck_s``: a hook that gave up on a slow but running server
(its budget is a few hundred milliseconds) spools its event, and the last event of a
session (its end) has no later hook run to retry it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio.to_thread

from ai_memory.core.errors import AiMemoryError
from ai_memory.core.principal import Principal
from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import Item, Tally, load, settle
from ai_memory.hooks.service import HookService
from ai_memory.store import identity

log = logging.getLogger(__name__)

BATCH = 256  # the most /hook/batch takes
LIMIT = 100_000
DEADLINE_S = 300.0
SATURATED_PAUSE_S = 0.5
SATURATED_TRIES = 20


@dataclass(frozen=True, slots=True)
class DrainSummary:
    found: int
    delivered: int
    rejected: int
    kept: int


def start_spool_drain(
    hooks: HookService, data_dir: Path, recheck_s: float = 0.0
) -> asyncio.Task[None]:
    """Drain the spool beside the server, then every ``recheck_s`` (0: once); cancel at shutdown."""
    return asyncio.get_running_loop().create_task(
        _keep_draining(hooks, data_dir, recheck_s), name="ai-memory-spool-drain"
    )


async def _keep_draining(hooks: HookService, data_dir: Path, recheck_s: float) -> None:
    await _guarded(hooks, data_dir)
    while recheck_s > 0:
        await asyncio.sleep(recheck_s)
        await _guarded(hooks, data_dir)


async def _guarded(hooks: HookService, data_dir: Path) -> DrainSummary:
    """A drain that fails (the writer stopping under it) is logged; the spool stays."""
    try:
        return await drain_spool(hooks, data_dir)
    except AiMemoryError as exc:
        log.warning("spool: delivery stopped, events stay spooled: %s", exc.message)
        return DrainSummary(0, 0, 0, 0)


async def drain_spool(
    hooks: HookService,
    data_dir: Path,
    *,
    batch: int = BATCH,
    limit: int = LIMIT,
    deadline_s: float = DEADLINE_S,
) -> DrainSummary:
    folder = data_dir / "spool"
    keys = await anyio.to_thread.run_sync(spool.pending, folder, limit)
    deadline = time.monotonic() + deadline_s
    tally = Tally()
    size = max(1, min(batch, hooks.limit))  # as many as the queue takes at once
    for start in range(0, len(keys), size):
        if time.monotonic() >= deadline:
            break
        part = keys[start : start + size]
        if await _deliver(hooks, folder, data_dir, part, tally, deadline):
            break  # nothing captured after an event still refused goes before it
    kept = await anyio.to_thread.run_sync(_still_spooled, folder, keys)
    summary = DrainSummary(len(keys), tally.delivered, tally.rejected, kept)
    if keys:
        log.info(
            "spool: %d event(s) found, %d delivered, %d refused, %d left",
            *(summary.found, summary.delivered, summary.rejected, kept),
        )
    return summary


async def _deliver(
    hooks: HookService,
    folder: Path,
    data_dir: Path,
    keys: list[str],
    tally: Tally,
    deadline: float,
) -> bool:
    """One batch; the items answered 429 are tried again after a pause, a few times.
    True when some are still refused then: what was captured after them must wait."""
    for _ in range(SATURATED_TRIES):
        items: list[Item] = await anyio.to_thread.run_sync(load, folder, keys)
        if not items:
            return False
        answered = await _ingest_by_owner(hooks, items)
        saturated = Tally()
        await anyio.to_thread.run_sync(_settle_all, folder, data_dir, answered, saturated)
        tally.delivered += saturated.delivered
        tally.rejected += saturated.rejected
        if not saturated.saturated:
            return False
        if time.monotonic() + SATURATED_PAUSE_S >= deadline:
            return True
        keys = [key for key in keys if spool.exists(folder, key)]
        await asyncio.sleep(SATURATED_PAUSE_S)
    return True


async def _ingest_by_owner(hooks: HookService, items: list[Item]) -> list[tuple[str, int, Any]]:
    """Each event stored as the user whose key captured it (the hook client notes the
    key's public id); one with no key id is the operator's. An event whose key was
    revoked since, or whose user was disabled, stays spooled: never the operator's."""
    answered: list[tuple[str, int, Any]] = []
    for captured_by in dict.fromkeys(item.key_id for item in items):
        mine = [item for item in items if item.key_id == captured_by]
        who = None if captured_by is None else await _key_user(hooks, captured_by)
        if captured_by is not None and who is None:
            log.warning("spool: %d event(s) of a key no longer valid stay spooled", len(mine))
            continue
        now = time.time_ns()
        results = await hooks.ingest_batch([item.posted(now) for item in mine], who)
        answered += [(mine[r.index].key, r.status, r.error) for r in results]
    return answered


async def _key_user(hooks: HookService, captured_by: str) -> Principal | None:
    return await hooks.runtime.readers.aread(
        lambda conn: identity.principal_for_key_id(conn, captured_by)
    )


def _settle_all(
    folder: Path, data_dir: Path, answered: list[tuple[str, int, Any]], tally: Tally
) -> None:
    for key, status, error in answered:
        settle(folder, key, status, error, data_dir, tally)


def _still_spooled(folder: Path, keys: list[str]) -> int:
    return sum(1 for key in keys if spool.exists(folder, key))
