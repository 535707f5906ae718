"""Whether the disk has lately answered fast enough for a file write to run in place.

A command run in place (:meth:`~ai_memory.store.writer.Writer.run_if_idle`) holds its
caller's thread, the server's event loop, until its transaction is answered. For a
command that writes files that includes what the disk makes it wait: the rest of the
temp files' fsyncs, the renames, the folders' fsyncs. Those take well under a
millisecond on an idle disk and can take a hundred times as long on a busy one, so
file writes run in place only while the writer's recent waits for the disk were short;
after a slow one they go through the queue again for a while.
"""

from __future__ import annotations

import time
from collections.abc import Callable

# A transaction's wait for its files above this counts as slow (an idle disk: ~0.5 ms).
SLOW_S = 0.004
# After a slow wait, file writes are queued (off the caller's thread) for this long.
QUIET_S = 2.0


class DiskWaits:
    """The writer's recent waits for its files, as one verdict: fast or not."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._slow_until = 0.0

    def record(self, wait_s: float) -> None:
        """Note how long a transaction waited for its files to last."""
        if wait_s > SLOW_S:
            self._slow_until = self._clock() + QUIET_S

    @property
    def fast(self) -> bool:
        """True unless a wait in the last :data:`QUIET_S` seconds was slow."""
        return self._clock() >= self._slow_until
