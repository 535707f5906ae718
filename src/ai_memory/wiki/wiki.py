"""``Wiki``: the one write path. A page write lands as a file, an index row and a checkpoint."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import (
    InvalidFrontmatter,
    InvalidInput,
    NotFound,
    PreconditionFailed,
)
from ai_memory.core.identity import PageRef, Scope
from ai_memory.core.kinds import KINDS, TIERS
from ai_memory.core.page import WriteResult
from ai_memory.store import pages
from ai_memory.store.commands import Rerunnable
from ai_memory.store.readers import ReaderPool
from ai_memory.store.writer import Writer
from ai_memory.wiki.document import build_document, complete_frontmatter
from ai_memory.wiki.frontmatter import block_bytes, parse_file, parse_markdown
from ai_memory.wiki.git import GitCheckpointer
from ai_memory.wiki.limits import check_body, check_fields, check_frontmatter, check_written
from ai_memory.wiki.page_reads import history, read_page

# Frontmatter keys a caller may set directly, next to (or instead of) a frontmatter block.
META_KEYS = frozenset(
    {
        "title",
        "kind",
        "tier",
        "tags",
        "entities",
        "pinned",
        "expires_at",
        "abstract",
        "summary",
        "session_id",
        "agent",
        "source_files",
    }
)


class Wiki:
    def __init__(
        self,
        root: Path,
        writer: Writer,
        readers: ReaderPool,
        checkpointer: GitCheckpointer | None,
        *,
        max_page_bytes: int,
        write_timeout: float = 10.0,
        clock: Callable[[], str] = now_iso,
    ) -> None:
        self.root = root
        self.writer = writer
        self.readers = readers
        self.checkpointer = checkpointer
        self.max_page_bytes = max_page_bytes
        self.write_timeout = write_timeout
        self.clock = clock
        # Temp files of pages are staged outside the watched tree (see store/files.py).
        writer.files.stage_under(root)

    def file_path(self, ref: PageRef) -> Path:
        return self.root.joinpath(ref.workspace, ref.project, ref.path)

    # -- writes ---------------------------------------------------------------

    def write_page(
        self,
        ref: PageRef,
        body: str,
        meta: Mapping[str, Any] | None = None,
        *,
        expected_page_id: int | None = None,
        create_only: bool = False,
        actor: str = "api",
    ) -> WriteResult:
        """Write a new version of ``ref``; preconditions are checked in the same transaction."""
        command = self.write_command(
            ref, body, meta, expected_page_id=expected_page_id, create_only=create_only, actor=actor
        )
        result = self.writer.call(command, timeout=self.write_timeout)
        self._checkpoint(ref, result.changed)
        return result

    async def awrite_page(
        self,
        ref: PageRef,
        body: str,
        meta: Mapping[str, Any] | None = None,
        *,
        expected_page_id: int | None = None,
        create_only: bool = False,
        actor: str = "api",
    ) -> WriteResult:
        command = self.write_command(
            ref, body, meta, expected_page_id=expected_page_id, create_only=create_only, actor=actor
        )
        result = await self.writer.run(command, timeout=self.write_timeout)
        self._checkpoint(ref, result.changed)
        return result

    def write_command(
        self,
        ref: PageRef,
        body: str,
        meta: Mapping[str, Any] | None = None,
        *,
        expected_page_id: int | None = None,
        create_only: bool = False,
        actor: str = "api",
    ) -> Callable[[sqlite3.Connection], WriteResult]:
        """Validate now, in the caller's thread; return the part that runs in the writer.

        Other write paths (session pages, for one) run this command inside a
        larger command of their own, so a page and its companions commit together.
        """
        check_body(body, self.max_page_bytes)
        parsed = parse_markdown(body)
        if parsed.error:
            raise InvalidFrontmatter(f"page {ref.path}: {parsed.error}")
        check_frontmatter(parsed.frontmatter, f"page {ref.path}")
        updates = _check_meta(meta or {})
        check_fields(updates)
        path = self.file_path(ref)

        def command(conn: sqlite3.Connection) -> WriteResult:
            now = self.clock()
            last = pages.newest(conn, ref)
            current = last if last is not None and last["is_latest"] else None
            absorbed = self._absorb_hand_edit(conn, ref, path, current, now)
            if absorbed is not current:
                current = last = absorbed
            _check_preconditions(ref, current, expected_page_id, create_only)
            if parsed.has_frontmatter or current is None:
                base = dict(parsed.frontmatter)
            else:
                base = pages.row_frontmatter(current)
            previous = pages.row_frontmatter(current) if current is not None else {}
            frontmatter = complete_frontmatter(ref, {**base, **updates}, parsed.body)
            frontmatter.setdefault("created", previous.get("created", now))
            if (
                current is not None
                and current["body"] == parsed.body
                and (_without_updated(previous) == _without_updated(frontmatter))
                and (self.writer.files.is_staged(path) or path.is_file())
            ):
                return _result(ref, current["id"], current["version"], changed=False, created=False)
            frontmatter["updated"] = now
            doc = build_document(ref, frontmatter, parsed.body)
            check_written(ref.path, doc.text, block_bytes(doc.text), self.max_page_bytes)
            # The file lands before the transaction commits: a crash in between leaves a
            # file the index re-derives at start, never a row without a file. Staged first,
            # its write and fsync go on while the rows below are inserted.
            self.writer.files.write(path, doc.text.encode("utf-8"))
            if current is None:  # a page's project exists (its rows' foreign key says so)
                pages.ensure_project(conn, ref.scope, now)
            page_id, version = pages.insert_after(conn, ref, doc, last, now=now, actor=actor)
            pages.audit(
                conn,
                now=now,
                actor=actor,
                action="write",
                ref=ref,
                detail={"page_id": page_id, "version": version},
            )
            return _result(ref, page_id, version, changed=True, created=current is None)

        return Rerunnable(command)

    def _absorb_hand_edit(
        self,
        conn: sqlite3.Connection,
        ref: PageRef,
        path: Path,
        current: sqlite3.Row | None,
        now: str,
    ) -> sqlite3.Row | None:
        """A hand edit the watcher has not indexed yet becomes a version of its own first,
        so the write supersedes it (and a precondition sees it) instead of erasing it."""
        if current is None or self.writer.files.is_staged(path):
            return current
        try:
            data = path.read_bytes()
        except OSError:
            return current  # missing: the write puts the file back
        if hashlib.sha256(data).hexdigest() == current["content_hash"]:
            return current
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return current
        parsed = parse_file(text)
        doc = build_document(ref, parsed.frontmatter, parsed.body, text=text, error=parsed.error)
        pages.insert_after(conn, ref, doc, current, now=now, actor="disk")
        return pages.latest(conn, ref)

    def delete_page(
        self, ref: PageRef, *, expected_page_id: int | None = None, actor: str = "api"
    ) -> int:
        page_id = self.writer.call(
            self._delete_command(ref, expected_page_id, actor), timeout=self.write_timeout
        )
        self._checkpoint(ref, True)
        return page_id

    async def adelete_page(
        self, ref: PageRef, *, expected_page_id: int | None = None, actor: str = "api"
    ) -> int:
        page_id = await self.writer.run(
            self._delete_command(ref, expected_page_id, actor), timeout=self.write_timeout
        )
        self._checkpoint(ref, True)
        return page_id

    def _delete_command(
        self, ref: PageRef, expected_page_id: int | None, actor: str, action: str = "delete"
    ) -> Callable[[sqlite3.Connection], int]:
        """The writer part of a removal; the forget sweep runs it as ``evict`` or ``expire``
        (the file goes, the last version stays as the tombstone, git keeps the text)."""

        def command(conn: sqlite3.Connection) -> int:
            current = pages.latest(conn, ref)
            if current is None:
                raise NotFound(f"no page {ref}")
            _check_preconditions(ref, current, expected_page_id, create_only=False)
            now = self.clock()
            pages.mark_deleted(conn, current["id"], now)
            pages.audit(
                conn,
                now=now,
                actor=actor,
                action=action,
                ref=ref,
                detail={"page_id": current["id"]},
            )
            self.writer.files.delete(self.file_path(ref))
            return int(current["id"])

        return command

    delete_command = _delete_command

    def _checkpoint(self, ref: PageRef, changed: bool) -> None:
        if changed and self.checkpointer is not None:
            self.checkpointer.notify(ref.relpath)

    # -- reads ----------------------------------------------------------------

    def read_page(
        self, ref: PageRef, *, version: int | None = None, page_id: int | None = None
    ) -> dict[str, Any]:
        return self.readers.read(lambda conn: read_page(conn, ref, version, page_id))

    async def aread_page(
        self, ref: PageRef, *, version: int | None = None, page_id: int | None = None
    ) -> dict[str, Any]:
        return await self.readers.aread(lambda conn: read_page(conn, ref, version, page_id))

    def history(self, ref: PageRef) -> list[dict[str, Any]]:
        return self.readers.read(lambda conn: history(conn, ref))

    async def ahistory(self, ref: PageRef) -> list[dict[str, Any]]:
        return await self.readers.aread(lambda conn: history(conn, ref))

    async def arecent(self, scope: Scope, limit: int) -> list[dict[str, Any]]:
        def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
            rows = conn.execute(pages.RECENT, (scope.workspace, scope.project, limit)).fetchall()
            return [pages.row_to_dict(row, with_body=False) for row in rows]

        return await self.readers.aread(query)


def _check_preconditions(
    ref: PageRef, current: sqlite3.Row | None, expected_page_id: int | None, create_only: bool
) -> None:
    current_id = int(current["id"]) if current is not None else None
    if create_only and current is not None:
        raise PreconditionFailed(f"page {ref} already exists", current_id)
    if expected_page_id is not None and expected_page_id != current_id:
        raise PreconditionFailed(
            f"page {ref} is at page_id {current_id}, not the expected {expected_page_id}",
            current_id,
        )


def _check_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(meta) - META_KEYS)
    if unknown:
        raise InvalidInput(f"unknown page field(s): {', '.join(unknown)}")
    updates = {k: v for k, v in meta.items() if v is not None}
    if "kind" in updates and updates["kind"] not in KINDS:
        raise InvalidInput(f"kind {updates['kind']!r} is not one of {', '.join(sorted(KINDS))}")
    if "tier" in updates and updates["tier"] not in TIERS:
        raise InvalidInput(f"tier {updates['tier']!r} is not one of {', '.join(sorted(TIERS))}")
    return updates


def _without_updated(frontmatter: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in frontmatter.items() if k != "updated"}


def _result(
    ref: PageRef, page_id: int, version: int, *, changed: bool, created: bool
) -> WriteResult:
    return WriteResult(page_id, version, ref.workspace, ref.project, ref.path, changed, created)
