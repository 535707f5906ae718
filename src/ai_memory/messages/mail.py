"""Send, list, pop and cancel: the checks every surface (MCP, HTTP, CLI) goes through.

Each operation authorises the caller on both ends through ``project_access.authorize``
before a row is read or staged; anything that lists messages leaves out those whose
other end is a project the caller may not read, as if they did not exist.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import anyio.to_thread

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Conflict, Forbidden, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, Principal
from ai_memory.messages.rules import MAX_QUEUED, check_agent, clean_draft
from ai_memory.messages.view import shown
from ai_memory.runtime import Runtime
from ai_memory.store import messages as sql
from ai_memory.store import pages
from ai_memory.store.messages import Party
from ai_memory.store.project_access import authorize, hidden_projects


async def send(
    runtime: Runtime,
    principal: Principal,
    sender: Scope,
    recipient: Scope,
    *,
    subject: str,
    body: str,
    to_agent: str | None = None,
    session: str | None = None,
    agent: str | None = None,
) -> dict[str, Any]:
    """Queue a message from ``sender`` (written by the caller) to ``recipient`` (read by them).

    The checks run in the writer command that queues it, so access, the recipient's
    existence and its inbox depth are those the insert sees."""
    draft = await anyio.to_thread.run_sync(
        clean_draft, sender, recipient, to_agent, subject, body, runtime.sanitizer
    )
    party = Party(principal.owner, session, agent)

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        authorize(conn, principal, sender, Access.WRITE)
        authorize(conn, principal, recipient, Access.READ)
        if not pages.project_exists(conn, recipient):
            raise NotFound(f"no project {recipient} to send a message to", argument="to_project")
        return sql.send(conn, draft, party, now=now_iso(), max_queued=MAX_QUEUED)

    row = await runtime.writer.run(command, timeout=runtime.config.store.write_timeout_s)
    return shown(row, body=True)


async def listing(
    runtime: Runtime,
    principal: Principal,
    scope: Scope,
    *,
    outbox: bool = False,
    status: str | None = "queued",
    limit: int = 20,
) -> list[dict[str, Any]]:
    """The project's inbox (or outbox), newest first, with a short preview of each body."""

    def query(conn: sqlite3.Connection) -> list[dict[str, Any]]:
        authorize(conn, principal, scope, Access.READ)
        hidden = hidden_projects(conn, principal)
        return sql.listing(conn, scope, outbox=outbox, status=status, limit=limit, hidden=hidden)

    rows = await runtime.readers.aread(query)
    return [shown(row, body=False) for row in rows]


async def pop(
    runtime: Runtime,
    principal: Principal,
    scope: Scope,
    *,
    agent: str | None = None,
    session: str | None = None,
) -> dict[str, Any] | None:
    """Claim the oldest queued message of ``scope`` for this agent kind; None if there is none.

    One writer command: the access check, the pick and the claim see the same state, so
    of concurrent pops exactly one gets a given message.
    """
    check_agent(agent, "agent")
    party = Party(principal.owner, session, agent)

    def command(conn: sqlite3.Connection) -> dict[str, Any] | None:
        authorize(conn, principal, scope, Access.WRITE)
        hidden = hidden_projects(conn, principal)
        return sql.claim_next(conn, scope, party, now=now_iso(), hidden=hidden)

    row = await runtime.writer.run(command, timeout=runtime.config.store.write_timeout_s)
    return shown(row, body=True) if row is not None else None


async def cancel(runtime: Runtime, principal: Principal, message_id: int) -> dict[str, Any]:
    """Cancel a still-queued message: its sender or an admin only."""

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        row = sql.get(conn, message_id)
        if row is None or not _visible(conn, principal, row):
            raise NotFound(f"no message {message_id}", argument="message_id")
        if not (principal.admin or principal.owns(row["sender_user"])):
            raise Forbidden(
                f"user {principal.name!r} may not cancel message {message_id}: only its "
                "sender or an admin may"
            )
        if not sql.cancel(conn, message_id, now=now_iso()):
            raise Conflict(f"message {message_id} is already {row['status']}; nothing to cancel")
        return sql.get(conn, message_id) or row

    row = await runtime.writer.run(command, timeout=runtime.config.store.write_timeout_s)
    return shown(row, body=True)


def _visible(conn: sqlite3.Connection, principal: Principal, row: dict[str, Any]) -> bool:
    """A message whose ends include a project the caller may not read does not exist for them."""
    if principal.admin or principal.owns(row["sender_user"]):
        return True
    hidden = hidden_projects(conn, principal)
    ends = (sql.other_end(row, outbox=True), sql.other_end(row, outbox=False))
    return not any(end in hidden for end in ends)
