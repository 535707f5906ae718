"""``ai-memory reindex``: rebuild the index from the wiki in one streaming pass.

The worker processes are forked first, before the writer and the git
checkpointer start their threads. One of them commits to git every file the
wiki holds uncommitted while the others parse the files that stream, chunk by
chunk, into the writer; the indexing process never loads git at all.
"""

from __future__ import annotations

from ai_memory.config import Config
from ai_memory.maintenance.lock import ServerLock
from ai_memory.runtime import Runtime
from ai_memory.wiki.git import commit_uncommitted
from ai_memory.wiki.parse_pool import ParsePool
from ai_memory.wiki.reindex import Progress, ReconcileReport


def reindex(config: Config, progress: Progress | None = None) -> ReconcileReport:
    """Refused (:class:`ServerRunning`) while a server owns the data dir."""
    wiki = config.wiki
    with ServerLock(config.data_dir, operation="reindex"), ParsePool(extra=1) as pool:
        git = pool.submit(commit_uncommitted, str(config.wiki_dir), wiki.git_author, wiki.git_email)
        # settle=False: the full collection a start makes for the memory its check of
        # the wiki held (~0.01 s) has nothing to give back here, and the process ends soon.
        runtime = Runtime.start(
            config,
            reconcile_wiki=False,
            embed=False,
            search=False,
            recover_git=False,
            settle=False,
        )
        try:
            report = runtime.reindex(progress, pool, checkpoint=False)
        finally:
            runtime.stop()
        failure = git.result()
    if failure:
        report.warnings.append(failure)
    return report
