"""What a sign-in does to the store: check a password, open or end a session, audit it.

Every attempt a rate limit lets in leaves an audit row (``sign-in``, with its
outcome and the client's address) naming the user it was for, or ``(unknown)``
when no such user exists (a mistyped name may be a password typed in the wrong
field, so it is not kept). A limit's refusals leave one row when it engages and
one with their count when it lifts.
Neither a password nor a cookie value ever reaches the row.
"""

from __future__ import annotations

import asyncio
import sqlite3
from typing import Any

from ai_memory.core.clock import now_iso
from ai_memory.core.principal import Principal
from ai_memory.runtime import Runtime
from ai_memory.store import pages, passwords, web_sessions
from ai_memory.store.acting import act_as, restore

ACTOR = "web"
UNKNOWN = Principal(None, "(unknown)", False)  # not a valid user name, so never a user's


async def token_retired(runtime: Runtime) -> bool:
    """True once a user has a password: the root token then signs in to nothing here."""
    return await runtime.readers.aread(passwords.any_password)


async def check_password(
    runtime: Runtime, name: str, password: str
) -> tuple[Principal | None, Principal]:
    """(the user ``name`` when ``password`` is theirs and they are enabled, else None;
    whom the attempt is audited as), from one read of the account.

    The slow check runs in a worker thread, and runs even for an unknown name.
    """
    account = await runtime.readers.aread(lambda conn: passwords.account(conn, name))
    if account is None:
        await asyncio.to_thread(passwords.password_matches, None, password)
        return None, UNKNOWN
    stored = None if account.disabled else account.password_hash
    matched = await asyncio.to_thread(passwords.password_matches, stored, password)
    return (account.principal if matched else None), account.principal


async def known_user(runtime: Runtime, name: str) -> Principal:
    """Whom an attempt for ``name`` is audited as."""
    account = await runtime.readers.aread(lambda conn: passwords.account(conn, name))
    return account.principal if account is not None else UNKNOWN


async def open_session(
    runtime: Runtime, user: Principal, address: str, replaces: str | None = None
) -> str:
    """A new session for ``user``, audited; returns the cookie value (never stored).

    The session the browser held before (``replaces``), if any, ends in the same step:
    a sign-in never leaves the old cookie working beside the new one.
    """
    session_id = web_sessions.new_id()
    assert user.user_id is not None
    user_id = user.user_id

    def command(conn: sqlite3.Connection) -> None:
        if replaces is not None:
            web_sessions.drop(conn, replaces)
        web_sessions.create(conn, user_id, session_id)
        write_audit(conn, "sign-in", {"outcome": "ok", "method": "password", "address": address})

    await run_as(runtime, user, command)
    return session_id


async def end_session(runtime: Runtime, user: Principal, session_id: str) -> None:
    def command(conn: sqlite3.Connection) -> None:
        web_sessions.drop(conn, session_id)
        write_audit(conn, "sign-out", {})

    await run_as(runtime, user, command)


async def audit_limit(
    runtime: Runtime, name: str | None, limit: str, detail: dict[str, Any]
) -> None:
    """A rate-limit row, named for the user a name limit is for (else unknown)."""
    who = await known_user(runtime, name) if limit == "name" and name is not None else UNKNOWN
    await audit_attempt(runtime, who, {**detail, "limit": limit})


async def audit_attempt(runtime: Runtime, user: Principal, detail: dict[str, Any]) -> None:
    await run_as(runtime, user, lambda conn: write_audit(conn, "sign-in", detail))


def write_audit(conn: sqlite3.Connection, action: str, detail: dict[str, Any]) -> None:
    pages.audit(conn, now=now_iso(), actor=ACTOR, action=action, detail=detail)


async def run_as(runtime: Runtime, user: Principal, command: Any) -> None:
    """Run ``command`` in the writer with ``user`` as the acting principal (the audit's name)."""
    token = act_as(user)
    try:
        await runtime.writer.run(command, timeout=5.0)
    finally:
        restore(token)
