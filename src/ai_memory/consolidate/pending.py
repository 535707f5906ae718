"""Deciding pending writes: approve (through ``Wiki``), reject, and what each one changes.

Approval is compare-and-write against the proposal's snapshot, in one writer
command with the decision: a target that changed since (another version, a hand
edit, a page that appeared or went) makes the proposal ``refused`` with the reason,
never merged; a pinned target is refused the same way. Whoever decides is recorded.
"""

from __future__ import annotations

import difflib
import sqlite3
from typing import Any

from ai_memory.core.errors import Conflict, InvalidInput, NotFound, PreconditionFailed
from ai_memory.core.identity import PageRef, Scope
from ai_memory.store import pages
from ai_memory.store import pending_writes as store
from ai_memory.wiki.wiki import Wiki

MAX_LIST = 500
ACTOR = "learning"


def ref_of(row: dict[str, Any]) -> PageRef:
    return Scope.of(row["workspace"], row["project"]).page(row["path"])


def summary(row: dict[str, Any]) -> dict[str, Any]:
    """A pending write without its bodies: what a list shows."""
    return {k: v for k, v in row.items() if k not in ("base_body", "proposed")}


def diff_lines(row: dict[str, Any]) -> list[str]:
    """The unified diff of the snapshot to the proposal (a new page: from nothing)."""
    before = (row["base_body"] or "").splitlines()
    after = row["proposed"].splitlines()
    old_name = (
        f"{row['path']} (page_id {row['base_page_id']})" if row["base_page_id"] else ("/dev/null")
    )
    return list(
        difflib.unified_diff(before, after, old_name, f"{row['path']} (proposed)", lineterm="")
    )


def detail(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "diff": "\n".join(diff_lines(row))}


def check_state(state: str | None) -> str | None:
    if state in (None, "", "all"):
        return None
    if state not in store.STATES:
        raise InvalidInput(f"state must be one of all, {', '.join(store.STATES)}")
    return state


def list_writes(
    conn: sqlite3.Connection, state: str | None, scope: Scope | None, limit: int
) -> list[dict[str, Any]]:
    if not 1 <= limit <= MAX_LIST:
        raise InvalidInput(f"limit must be from 1 to {MAX_LIST}")
    rows = store.listed(conn, state=check_state(state), scope=scope, limit=limit)
    return [summary(row) for row in rows]


def get_write(conn: sqlite3.Connection, pending_id: int) -> dict[str, Any]:
    row = store.get(conn, pending_id)
    if row is None:
        raise NotFound(f"no pending write {pending_id}")
    return row


def _must_be_pending(row: dict[str, Any]) -> None:
    if row["state"] != "pending":
        raise Conflict(
            f"pending write {row['id']} is already {row['state']} "
            f"(by {row['decided_by']} at {row['decided_at']}); nothing changed"
        )


def approve(wiki: Wiki, pending_id: int, by: str) -> dict[str, Any]:
    """Apply the proposal as a new version, or record why it was refused."""
    row = wiki.readers.read(lambda conn: get_write(conn, pending_id))
    _must_be_pending(row)
    ref = ref_of(row)
    base = row["base_page_id"]
    write = wiki.write_command(
        ref,
        row["proposed"],
        expected_page_id=base,
        create_only=base is None,
        actor=ACTOR,
    )

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        now = wiki.clock()
        _must_be_pending(get_write(conn, pending_id))
        refusal = _pinned_reason(conn, ref)
        result = None
        if refusal is None:
            try:
                result = write(conn)
            except PreconditionFailed as exc:
                refusal = _changed_reason(base, exc.current_page_id)
        if result is None:
            store.decide(conn, pending_id, state="refused", now=now, by=by, error=refusal)
        else:
            store.decide(
                conn, pending_id, state="applied", now=now, by=by, result_page_id=result.page_id
            )
        pages.audit(
            conn,
            now=now,
            actor=by,
            action="approve-pending" if result else "refuse-pending",
            ref=ref,
            detail={"pending_id": pending_id, "page_id": result.page_id if result else None},
        )
        return {"changed": bool(result and result.changed), "row": get_write(conn, pending_id)}

    outcome = wiki.writer.call(command, timeout=wiki.write_timeout)
    if outcome["changed"] and wiki.checkpointer is not None:
        wiki.checkpointer.notify(ref.relpath)
    decided: dict[str, Any] = outcome["row"]
    if decided["state"] == "refused":
        raise Conflict(
            f"pending write {pending_id} was refused: {decided['error']}",
            pending_write=summary(decided),
        )
    return summary(decided)


def reject(wiki: Wiki, pending_id: int, by: str, reason: str = "") -> dict[str, Any]:
    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        row = get_write(conn, pending_id)
        _must_be_pending(row)
        now = wiki.clock()
        store.decide(conn, pending_id, state="rejected", now=now, by=by, error=reason or None)
        pages.audit(
            conn,
            now=now,
            actor=by,
            action="reject-pending",
            ref=ref_of(row),
            detail={"pending_id": pending_id},
        )
        return summary(get_write(conn, pending_id))

    decided: dict[str, Any] = wiki.writer.call(command, timeout=wiki.write_timeout)
    return decided


def _pinned_reason(conn: sqlite3.Connection, ref: PageRef) -> str | None:
    current = pages.latest(conn, ref)
    if current is not None and current["deleted_at"] is None and current["pinned"]:
        return f"{ref.path} is pinned; the learning loop never rewrites a pinned page"
    return None


def _changed_reason(base: int | None, current: int | None) -> str:
    if base is None:
        return (
            f"the page was created (page_id {current}) after this proposal for a new page was "
            "made; nothing was merged — review the page and propose again"
        )
    now = f"page_id {current}" if current is not None else "gone"
    return (
        f"the page changed since the proposal was made (proposed against page_id {base}, "
        f"now {now}); nothing was merged — review the page and propose again"
    )
