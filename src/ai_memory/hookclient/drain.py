"""Delivering everything left in the spool (``ai-memory hook-drain``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from ai_memory.hookclient import spool
from ai_memory.hookclient.main import retry_spooled
from ai_memory.hookclient.transport import Transport, Unreachable

BATCH = 256


@dataclass(frozen=True, slots=True)
class DrainReport:
    delivered: int
    remaining: int
    reachable: bool


def drain(data_dir: Path, url: str, token: str | None, *, timeout_s: float = 60.0) -> DrainReport:
    """Post spooled events in batches, oldest first, until the spool is empty or no progress."""
    folder = data_dir / "spool"
    transport = Transport(url, token, time.monotonic() + timeout_s)
    delivered = 0
    try:
        while spool.pending(folder, 1):
            try:
                settled, _ = retry_spooled(transport, folder, BATCH, data_dir)
            except Unreachable:
                settled = 0
            if settled == 0:
                break
            delivered += settled
    finally:
        transport.close()
    return DrainReport(delivered, len(spool.pending(folder)), not transport.down)
