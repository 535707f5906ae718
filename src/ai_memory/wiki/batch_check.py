"""A batch of page writes that lands whole or not at all, with every failure named.

Importers send many pages at once; a batch that stopped at its first bad entry would
make them resend, fix and resend again. Every entry is validated first (path, body,
frontmatter, fields), then every precondition is checked in the writer before any page
is staged: one failing entry writes nothing (no file, no row, no commit) and the answer
names each failing entry's index and reason. The pages are written as
:mod:`ai_memory.wiki.batch` writes a consolidation's: one transaction, one checkpoint.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio.to_thread

from ai_memory.core.errors import AiMemoryError, InvalidInput
from ai_memory.core.identity import Scope
from ai_memory.core.page import WriteResult
from ai_memory.store import pages
from ai_memory.wiki.batch import PageWrite, checkpoint
from ai_memory.wiki.wiki import Wiki

MAX_ENTRIES = 100
PageCommand = Callable[[sqlite3.Connection], WriteResult]
Fields = Callable[[Mapping[str, Any]], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class Entry:
    """One page of a batch as a caller sends it (the path is still unchecked)."""

    path: str
    body: str
    meta: Mapping[str, Any] = field(default_factory=dict)
    expected_page_id: int | None = None
    create_only: bool = False


class BatchRefused(AiMemoryError):
    """Entries of a batch failed; nothing of the batch was written."""

    code = "batch_refused"
    http_status = 409

    def __init__(self, failures: list[dict[str, Any]], *, invalid: bool = False) -> None:
        first = failures[0]
        super().__init__(
            f"{len(failures)} entr{'y' if len(failures) == 1 else 'ies'} of the batch failed, "
            f"so nothing was written; entry {first['index']} ({first['path']}): "
            f"{first['message']}",
            failures=failures,
        )
        if invalid:  # a malformed entry, rather than a page that moved on
            self.http_status = 400


async def awrite_entries(
    wiki: Wiki, scope: Scope, entries: Sequence[Entry], *, actor: str, fields: Fields = dict
) -> list[WriteResult]:
    """Write every entry into ``scope``, all or nothing. The caller has checked access.

    ``fields`` turns an entry's fields into the ones stored (a surface's own parsing,
    e.g. of ``expires_at``); what it raises fails that entry."""
    prepared = await anyio.to_thread.run_sync(prepare, wiki, scope, entries, actor, fields)
    results = await wiki.writer.run(batch_command(prepared), timeout=wiki.write_timeout)
    checkpoint(wiki, [write for write, _ in prepared], results)
    return results


def summary(results: Sequence[WriteResult]) -> dict[str, Any]:
    """The answer every surface gives for a written batch: counts, then each page."""
    return {
        "written": len(results),
        "changed": sum(result.changed for result in results),
        "pages": [result.to_dict() for result in results],
    }


def prepare(
    wiki: Wiki, scope: Scope, entries: Sequence[Entry], actor: str, fields: Fields = dict
) -> list[tuple[PageWrite, PageCommand]]:
    """Validate every entry (CPU-bound: off the event loop); refuse with all failures."""
    if not 1 <= len(entries) <= MAX_ENTRIES:
        raise InvalidInput(
            f"a batch holds 1 to {MAX_ENTRIES} pages, not {len(entries)}", argument="pages"
        )
    failures: list[dict[str, Any]] = []
    prepared: list[tuple[PageWrite, PageCommand]] = []
    seen: dict[str, int] = {}
    for index, entry in enumerate(entries):
        try:
            ref = scope.page(entry.path)
            if ref.path in seen:
                raise InvalidInput(f"page {ref.path} is also entry {seen[ref.path]}")
            seen[ref.path] = index
            meta = fields(entry.meta)
            write = PageWrite(ref, entry.body, meta, entry.expected_page_id, entry.create_only)
            command = wiki.write_command(
                ref,
                entry.body,
                meta,
                expected_page_id=entry.expected_page_id,
                create_only=entry.create_only,
                actor=actor,
            )
        except AiMemoryError as exc:
            failures.append(failure(index, entry.path, exc))
            continue
        prepared.append((write, command))
    if failures:
        raise BatchRefused(failures, invalid=True)
    return prepared


def batch_command(
    prepared: Sequence[tuple[PageWrite, PageCommand]],
) -> Callable[[sqlite3.Connection], list[WriteResult]]:
    """The writer's part: every precondition first, then every page, in one savepoint."""

    def command(conn: sqlite3.Connection) -> list[WriteResult]:
        failures = [
            found
            for index, (write, _) in enumerate(prepared)
            if (found := precondition(conn, index, write)) is not None
        ]
        if failures:
            raise BatchRefused(failures)
        results = []
        for index, (write, page_command) in enumerate(prepared):
            try:
                results.append(page_command(conn))
            except AiMemoryError as exc:  # the savepoint drops the pages written before it
                raise BatchRefused([failure(index, write.ref.path, exc)]) from exc
        return results

    return command


def precondition(conn: sqlite3.Connection, index: int, write: PageWrite) -> dict[str, Any] | None:
    """The entry's ``create_only`` / ``expected_page_id`` check, as a failure or None."""
    current = pages.latest(conn, write.ref)
    current_id = int(current["id"]) if current is not None else None
    if write.create_only and current_id is not None:
        reason = f"page {write.ref.path} already exists (page_id {current_id})"
    elif write.expected_page_id is not None and write.expected_page_id != current_id:
        reason = (
            f"page {write.ref.path} is at page_id {current_id}, not the expected "
            f"{write.expected_page_id}"
        )
    else:
        return None
    return {
        "index": index,
        "path": write.ref.path,
        "error": "precondition_failed",
        "message": reason,
        "current_page_id": current_id,
    }


def failure(index: int, path: str, exc: AiMemoryError) -> dict[str, Any]:
    return {**exc.details, "index": index, "path": path, "error": exc.code, "message": exc.message}
