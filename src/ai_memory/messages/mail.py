"""Send, list, pop and cancel: the checks every surface (MCP, HTTP, CLI) goes through.

Each operation authorises the caller on both ends through ``project_access.authorize``
before a row is read or staged. A message belongs to the boxes of both its ends: whoever
may read one of them sees it there with the other end named, since its sender (who could
read both) chose to name it.
"""

from __future__ import annotations

import sqlite3
from typing import Any

import anyio.to_thread

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Conflict, Forbidden, InvalidInput, NotFound
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Access, Principal
from ai_memory.messages.rules import MAX_QUEUED, MAX_QUEUED_PER_SENDER, check_agent, clean_draft
from ai_memory.messages.view import shown
from ai_memory.runtime import Runtime
from ai_memory.store import messages as sql
from ai_memory.store import pages
from ai_memory.store.messages import Party
from ai_memory.store.project_access import authorize, hidden_projects
from ai_memory.store.sessions import session_owner


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
    reported: bool = False,
) -> dict[str, Any]:
    """Queue a message from ``sender`` (written by the caller) to ``recipient`` (read by them).

    Both projects must exist. The checks run in the writer command that queues it, so
    access, existence, the session and the inbox depth are those the insert sees.
    ``reported``: the session came from the transport, not the caller (see
    :func:`_own_session`)."""
    draft = await anyio.to_thread.run_sync(
        clean_draft, sender, recipient, to_agent, subject, body, runtime.sanitizer
    )
    per_sender = None if principal.admin else MAX_QUEUED_PER_SENDER

    def command(conn: sqlite3.Connection) -> dict[str, Any]:
        authorize(conn, principal, sender, Access.WRITE)
        _must_exist(conn, sender, "from", "project")
        authorize(conn, principal, recipient, Access.READ)
        _must_exist(conn, recipient, "to", "to_project")
        own = _own_session(conn, principal, sender, session, reported=reported, verb="send")
        party = Party(principal.owner, own, agent)
        return sql.send(
            conn, draft, party, now=now_iso(), max_queued=MAX_QUEUED, max_theirs=per_sender
        )

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
        return sql.listing(conn, scope, outbox=outbox, status=status, limit=limit)

    rows = await runtime.readers.aread(query)
    return [shown(row, body=False) for row in rows]


async def pop(
    runtime: Runtime,
    principal: Principal,
    scope: Scope,
    *,
    agent: str | None = None,
    session: str | None = None,
    reported: bool = False,
) -> dict[str, Any] | None:
    """Claim the oldest queued message of ``scope`` for this agent kind; None if there is none.

    One writer command: the access check, the pick and the claim see the same state, so
    of concurrent pops exactly one gets a given message.
    """
    check_agent(agent, "agent")

    def command(conn: sqlite3.Connection) -> dict[str, Any] | None:
        authorize(conn, principal, scope, Access.WRITE)
        own = _own_session(conn, principal, scope, session, reported=reported, verb="pop")
        return sql.claim_next(conn, scope, Party(principal.owner, own, agent), now=now_iso())

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
        if not sql.cancel(conn, row, now=now_iso()):
            raise Conflict(f"message {message_id} is already {row['status']}; nothing to cancel")
        return sql.get(conn, message_id) or row

    row = await runtime.writer.run(command, timeout=runtime.config.store.write_timeout_s)
    return shown(row, body=True)


def _visible(conn: sqlite3.Connection, principal: Principal, row: dict[str, Any]) -> bool:
    """A message is in the boxes of both its ends: whoever may read either one sees it."""
    if principal.admin or principal.owns(row["sender_user"]):
        return True
    hidden = hidden_projects(conn, principal)
    sender = Scope(row["from_workspace"], row["from_project"])
    return sender not in hidden or Scope(row["to_workspace"], row["to_project"]) not in hidden


def _must_exist(conn: sqlite3.Connection, scope: Scope, end: str, argument: str) -> None:
    """A message joins two projects that exist: sending never creates one."""
    if not pages.project_exists(conn, scope):
        raise NotFound(f"no project {scope} to send a message {end}", argument=argument)


def _own_session(
    conn: sqlite3.Connection,
    principal: Principal,
    scope: Scope,
    session: str | None,
    *,
    reported: bool,
    verb: str,
) -> str | None:
    """The session a message records: one the caller captured in ``scope`` (admins: any
    session there), so no one can sign a message with another user's session.

    A session the caller named that is not theirs there is refused; one the transport
    reported (a header, the launch directory) is only dropped, since the call may name
    another project than the session's."""
    if session is None:
        return None
    captured, owner = session_owner(conn, scope, session)
    if captured and (principal.sees_every_owner() or principal.owns(owner)):
        return session
    if reported:
        return None
    if not captured:
        raise InvalidInput(
            f"no session {session} in project {scope}: session_id must be one of your own "
            "sessions there",
            argument="session_id",
        )
    raise Forbidden(
        f"user {principal.name!r} may not {verb} as session {session} in {scope}: another "
        "user captured it"
    )
