"""Restore a page from git: list the checkpoints that changed it, write one back through Wiki.

A restored page is a new version (history only grows), so an evicted, expired
or deleted page comes back as long as a checkpoint holds its text, even after
its tombstone was purged from the index.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ai_memory.core.clock import iso
from ai_memory.core.errors import InvalidInput, NotFound
from ai_memory.core.identity import PageRef
from ai_memory.core.page import WriteResult
from ai_memory.wiki.document import build_document
from ai_memory.wiki.wiki import Wiki

if TYPE_CHECKING:  # git loads when a checkpoint is read, not with the server
    import pygit2

MAX_CHECKPOINTS = 200
LAST_REMOVED = """
SELECT body, frontmatter, deleted_at FROM pages WHERE workspace = ? AND project = ? AND path = ?
    AND deleted_at IS NOT NULL
    AND version = (SELECT max(version) FROM pages WHERE workspace = ? AND project = ? AND path = ?)
"""
MAX_WALK = 20_000


def _blob_id(commit: pygit2.Commit, relpath: str) -> pygit2.Oid | None:
    try:
        return commit.tree[relpath].id
    except KeyError:
        return None


def checkpoints(wiki: Wiki, ref: PageRef, limit: int = MAX_CHECKPOINTS) -> list[dict[str, Any]]:
    """The commits that changed the page's file, newest first (``deleted`` when it went)."""
    import pygit2

    repo = pygit2.Repository(str(wiki.root))
    if repo.head_is_unborn:
        return []
    out: list[dict[str, Any]] = []
    walked = 0
    for commit in repo.walk(repo.head.target, pygit2.enums.SortMode.TIME):
        walked += 1
        if walked > MAX_WALK or len(out) >= limit:
            break
        mine = _blob_id(commit, ref.relpath)
        parent = _blob_id(commit.parents[0], ref.relpath) if commit.parents else None
        if mine == parent:
            continue
        out.append(
            {
                "rev": str(commit.id),
                "at": iso(_commit_time(commit)),
                "message": commit.message.splitlines()[0] if commit.message else "",
                "deleted": mine is None,
            }
        )
    return out


def _commit_time(commit: pygit2.Commit) -> datetime:
    return datetime.fromtimestamp(commit.commit_time, UTC)


def page_text(wiki: Wiki, ref: PageRef, rev: str | None) -> tuple[str, str]:
    """The page's text at ``rev`` (default: the newest checkpoint that holds it) and the rev."""
    import pygit2

    repo = pygit2.Repository(str(wiki.root))
    if rev is None:
        for entry in checkpoints(wiki, ref):
            if not entry["deleted"]:
                rev = str(entry["rev"])
                break
        else:
            raise NotFound(f"no checkpoint holds {ref}")
    try:
        commit = repo.revparse_single(rev).peel(pygit2.Commit)
    except (KeyError, ValueError, pygit2.GitError) as exc:
        raise InvalidInput(f"rev {rev!r} is not a commit of the wiki") from exc
    blob = _blob_id(commit, ref.relpath)
    if blob is None:
        raise NotFound(f"checkpoint {str(commit.id)[:12]} does not hold {ref}")
    data = repo[blob].peel(pygit2.Blob).data
    try:
        return data.decode("utf-8"), str(commit.id)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{ref} at {rev} is not UTF-8 text") from exc


def tombstone_text(wiki: Wiki, ref: PageRef) -> str | None:
    """The text of the page's last version in the index when it was removed (its tombstone)."""
    row = wiki.readers.read(
        lambda conn: conn.execute(
            LAST_REMOVED, (ref.workspace, ref.project, ref.path) * 2
        ).fetchone()
    )
    if row is None:
        return None
    return build_document(ref, json.loads(row["frontmatter"]), row["body"]).text


def restore_page(wiki: Wiki, ref: PageRef, rev: str | None = None) -> dict[str, Any]:
    """Write the page's text at ``rev`` back as a new version; returns the write and the rev.

    Without ``rev``, a removed page whose tombstone is still in the index comes back as
    it was removed; otherwise the newest checkpoint holding the page is used.
    """
    text = tombstone_text(wiki, ref) if rev is None else None
    if text is not None:
        commit = "tombstone"
    else:
        text, commit = page_text(wiki, ref, rev)
    result: WriteResult = wiki.write_page(ref, text, actor="restore")
    return {
        "workspace": ref.workspace,
        "project": ref.project,
        "path": ref.path,
        "page_id": result.page_id,
        "version": result.version,
        "changed": result.changed,
        "rev": commit,
    }


def force_checkpoint(wiki: Wiki) -> dict[str, Any]:
    """Commit whatever the checkpointer holds now (``ai-memory commit``)."""
    if wiki.checkpointer is None:
        return {"commits": 0}
    before = wiki.checkpointer.commits
    wiki.checkpointer.flush()
    return {"commits": wiki.checkpointer.commits - before}
