"""Delivering everything left in the spool (``ai-memory hook-drain``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import key_id, load, retry_spooled
from ai_memory.hookclient.transport import Transport

# The server takes at most 256 items in one batch.
BATCH = 256
SATURATED_PAUSE_S = 0.5


@dataclass(frozen=True, slots=True)
class DrainReport:
    delivered: int  # stored by the server
    rejected: int  # refused as invalid, set aside in spool/rejected/
    remaining: int  # still spooled
    reachable: bool
    others: int = 0  # of those, captured with another credential (left for it)


def drain(
    data_dir: Path,
    url: str,
    token: str | None,
    *,
    timeout_s: float = 60.0,
    batch: int = BATCH,
) -> DrainReport:
    """Post spooled events oldest first until the spool is empty, no progress, or time is up.

    Only the events ``token`` captured: one another key (or the root token) captured
    stays spooled, so a drain never makes another user, or the operator, their owner.

    ``batch`` should not exceed the server's ingest queue (``hooks.queue_size``); a
    batch answered 429 is retried after a pause, at half the size.
    """
    folder = data_dir / "spool"
    deadline = time.monotonic() + timeout_s
    transport = Transport(url, token, deadline)
    delivered = rejected = 0
    size = max(1, min(batch, BATCH))
    captured_by = key_id(token)
    try:
        while spool.pending(folder, 1) and not transport.down:
            tally = retry_spooled(transport, folder, size, data_dir, captured_by=captured_by)
            delivered += tally.delivered
            rejected += tally.rejected
            if tally.settled or tally.shrunk:
                continue
            if not tally.saturated or time.monotonic() + SATURATED_PAUSE_S >= deadline:
                break
            size = max(1, size // 2)
            time.sleep(SATURATED_PAUSE_S)
    finally:
        transport.close()
    left = spool.pending(folder)
    others = sum(1 for item in load(folder, left) if item.key_id != captured_by)
    return DrainReport(delivered, rejected, len(left), not transport.down, others)
