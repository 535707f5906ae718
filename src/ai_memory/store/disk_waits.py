"""Whether the disk has lately answered fast enough for a file write to run in place.

A command run in place (:meth:`~ai_memory.store.writer.Writer.run_if_idle`) holds its
caller's thread, the server's event loop, until its transaction is answered. For a
command that writes files that includes what the disk makes it wait: the rest of the
temp files' fsyncs, the renames, the folders' fsyncs. On an idle disk that is about half
a millisecond, with now and then a wait of tens of milliseconds (a busy host); on a
busy disk every wait can be that long. So file writes run in place only while a moving
average of the writer's recent waits is short: a lone slow wait does not close the way,
a disk that stays slow does within a few writes, and since queued transactions go on
recording their waits, the way opens again once the disk is fast again.
"""

from __future__ import annotations

# File writes run in place while the average wait is at most this (idle disk: ~0.6 ms).
SLOW_S = 0.003
# The weight of the newest wait in the average: about the last ten writes count.
NEWEST = 0.1


class DiskWaits:
    """A moving average of the writer's waits for its files, as one verdict: fast or not."""

    def __init__(self) -> None:
        self._average = 0.0

    def record(self, wait_s: float) -> None:
        """Note how long a transaction waited for its files to last."""
        self._average += (wait_s - self._average) * NEWEST

    @property
    def average_s(self) -> float:
        return self._average

    @property
    def fast(self) -> bool:
        return self._average <= SLOW_S
