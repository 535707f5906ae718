"""``ai-memory reindex``: rebuild the index from the wiki in one streaming pass.

The parse workers are forked first, before the writer and the git checkpointer
start their threads; then the files stream through them into the writer, and
one git checkpoint at the end records every file the wiki holds uncommitted
(its objects already stored by the workers).
"""

from __future__ import annotations

from ai_memory.config import Config
from ai_memory.maintenance.lock import ServerLock
from ai_memory.runtime import Runtime
from ai_memory.wiki.parse_pool import ParsePool
from ai_memory.wiki.reindex import Progress, ReconcileReport


def reindex(config: Config, progress: Progress | None = None) -> ReconcileReport:
    """Refused (:class:`ServerRunning`) while a server owns the data dir."""
    with ServerLock(config.data_dir, operation="reindex"), ParsePool() as pool:
        runtime = Runtime.start(
            config, reconcile_wiki=False, embed=False, search=False, recover_git=False
        )
        try:
            report = runtime.reindex(progress, pool)
            runtime.checkpointer.recover()
        finally:
            runtime.stop()
    return report
