"""The status answer ``/admin/status``, ``ai-memory status`` and the health page share.

Other parts of the server add their own sections (the scheduler's state, say)
by registering a callable in the ``sections`` mapping they are handed: each
returns a plain dict, shown under its name; a section that fails says so
instead of failing the answer.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import anyio.to_thread

from ai_memory import __version__
from ai_memory.metrics.registry import Metrics
from ai_memory.metrics.status_queries import status_rows
from ai_memory.runtime import Runtime
from ai_memory.store.write_waits import WaitSnapshot
from ai_memory.store.writer import Writer

log = logging.getLogger(__name__)
Section = Callable[[], Mapping[str, Any]]
WRITER_BACKLOG_WARN = 100
WRITER_WAIT_WARN_MS = 2000
SPOOL_WARN = 50


async def build_status(
    runtime: Runtime, metrics: Metrics, sections: Mapping[str, Section]
) -> dict[str, Any]:
    rows = await runtime.readers.aread(status_rows)
    disk = await anyio.to_thread.run_sync(disk_facts, runtime)
    config = runtime.config
    data: dict[str, Any] = {
        "version": __version__,
        "data_dir": str(config.data_dir),
        "server": {"bind": config.server.bind, "url": config.server.url},
        **rows["totals"],
        "projects": rows["projects"],
        "sessions_open": rows["sessions_open"],
        "identities": rows["identities"],  # users who may sign in, and their usable keys
        "writer": writer_facts(runtime),
        "hooks": {"slowest_recent_answer_ms": round(metrics.slowest_recent_hook_s() * 1000, 1)},
        "last": {
            "write": rows["last_write_at"],
            "checkpoint": disk["checkpoint"],
            "maintenance": rows["last_maintenance_at"],
        },
        "spool": disk["spool"],
        "sizes": {"index_bytes": disk["index_bytes"]},
        "embedder": embedder_health(runtime),
        "llm": llm_health(runtime),
    }
    for name, section in sections.items():
        try:
            data[name] = dict(section())
        except Exception as exc:  # a broken section must not hide the rest
            log.exception("status section %s failed", name)
            data[name] = {"error": type(exc).__name__}
    data["warnings"] = warnings_for(data)
    return data


def writer_facts(runtime: Runtime) -> dict[str, Any]:
    """The queue: how many writes wait now, and the longest any waited lately (submit to
    start), counting the oldest still waiting."""
    writer = runtime.writer
    return {
        "queue_depth": writer.backlog,
        "longest_recent_wait_ms": round(writer_waits(writer).longest_recent_s * 1000, 3),
        "recent_window_s": writer.waits.window_s,
        "transactions": writer.transactions,
        "commands": writer.commands,
    }


def writer_waits(writer: Writer) -> WaitSnapshot:
    """The writer's recorded waits, the longest raised to the oldest command still queued."""
    waits = writer.waits.snapshot()
    longest = max(waits.longest_recent_s, writer.oldest_wait_s)
    return dataclasses.replace(waits, longest_recent_s=longest)


def disk_facts(runtime: Runtime) -> dict[str, Any]:
    """What lives on disk rather than in the index: spool, checkpoint time, file sizes."""
    config = runtime.config
    return {
        "spool": spool_facts(config.spool_dir),
        "checkpoint": last_checkpoint(config.wiki_dir),
        "index_bytes": sum(
            p.stat().st_size
            for p in config.db_path.parent.glob(config.db_path.name + "*")
            if p.is_file()
        ),
    }


def spool_facts(spool: Path, now: float | None = None) -> dict[str, Any]:
    try:
        names = [n for n in os.listdir(spool) if n.endswith(".json") and not n.startswith(".")]
    except FileNotFoundError:
        names = []
    ages = [(time.time() if now is None else now) - (spool / n).stat().st_mtime for n in names]
    return {"depth": len(names), "oldest_age_s": round(max(ages, default=0.0), 1)}


def last_checkpoint(wiki: Path) -> str | None:
    import pygit2  # here, not at import: the server answers before it needs git

    try:
        repo = pygit2.Repository(str(wiki))
        if repo.head_is_unborn:
            return None
        commit = repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError):
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(commit.commit_time))


def embedder_health(runtime: Runtime) -> dict[str, Any]:
    settings = runtime.config.embeddings
    if settings.provider == "none":
        return {"configured": False}
    retrieval = runtime.retrieval
    background = retrieval.background
    return {
        "configured": True,
        "provider": settings.provider,
        "model": settings.model,
        "loaded": retrieval.engine.vectors is not None,
        "embedded_up_to": background.watermark if background is not None else None,
    }


def llm_health(runtime: Runtime) -> dict[str, Any]:
    """Each LLM candidate's circuit and last outcome; never a key, a prompt or a body."""
    if runtime.llm is None:
        return {"configured": False}
    return {"configured": True, "candidates": runtime.llm.health()}


def llm_warnings(llm: Mapping[str, Any], dir_arg: str) -> list[dict[str, str]]:
    return [
        {
            "message": f"LLM {c['provider']} {c['model']} is failing "
            f"(circuit {c['circuit']}, last error {c['last_error']})",
            "fix": f"ai-memory llm-test {dir_arg}",
        }
        for c in llm.get("candidates", [])
        if c["circuit"] != "closed"
    ]


def warnings_for(data: Mapping[str, Any]) -> list[dict[str, str]]:
    found: list[dict[str, str]] = []
    dir_arg = f"--data-dir {data['data_dir']}"
    if data["writer"]["queue_depth"] >= WRITER_BACKLOG_WARN:
        found.append(
            {
                "message": f"{data['writer']['queue_depth']} writes wait for the writer",
                "fix": f"ai-memory doctor {dir_arg}",
            }
        )
    if (waited_ms := data["writer"]["longest_recent_wait_ms"]) >= WRITER_WAIT_WARN_MS:
        found.append(
            {
                "message": f"a write waited {waited_ms / 1000:.1f} s for the writer "
                "in the last 5 minutes",
                "fix": f"ai-memory doctor {dir_arg}",
            }
        )
    if data["spool"]["depth"] >= SPOOL_WARN:
        found.append(
            {
                "message": f"{data['spool']['depth']} hook events wait in the spool",
                "fix": f"ai-memory hook-drain {dir_arg}",
            }
        )
    embedder = data["embedder"]
    if embedder.get("configured") and not embedder.get("loaded"):
        found.append(
            {
                "message": f"the {embedder['provider']} embedder is configured but not loaded",
                "fix": "pip install 'ai-memory[embeddings]'",
            }
        )
    found += llm_warnings(data["llm"], dir_arg)
    return found
