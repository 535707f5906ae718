"""Server-side web sessions: the browser holds a random id, the table only its hash.

A leaked database therefore opens no browser session, and a session ends for
good when its row goes: on sign-out, after seven days, or when its user is
disabled, removed or given a new password.
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
from datetime import datetime, timedelta

from ai_memory.core.clock import iso, utc_now
from ai_memory.core.principal import Principal

LIFETIME = timedelta(days=7)

INSERT = "INSERT INTO web_sessions(id_hash, user_id, created_at, expires_at) VALUES (?, ?, ?, ?)"
LOOKUP = """
SELECT u.id, u.name, u.admin
FROM web_sessions s JOIN users u ON u.id = s.user_id
WHERE s.id_hash = ? AND s.expires_at > ? AND u.disabled_at IS NULL
"""
DELETE_ONE = "DELETE FROM web_sessions WHERE id_hash = ?"
DELETE_FOR_USER = "DELETE FROM web_sessions WHERE user_id = ?"
DELETE_EXPIRED = "DELETE FROM web_sessions WHERE expires_at <= ?"


def new_id() -> str:
    """The cookie value of a new session: 256 random bits."""
    return secrets.token_urlsafe(32)


def id_hash(session_id: str) -> str:
    return hashlib.sha256(session_id.encode("utf-8", "replace")).hexdigest()


def create(
    conn: sqlite3.Connection, user_id: int, session_id: str, *, at: datetime | None = None
) -> str:
    """Store a session for ``user_id`` begun ``at`` (now); returns when it expires.

    Expired rows of anyone go on the way, so the table holds only live sessions.
    """
    moment = at or utc_now()
    created, expires = iso(moment), iso(moment + LIFETIME)
    conn.execute(DELETE_EXPIRED, (created,))
    conn.execute(INSERT, (id_hash(session_id), user_id, created, expires))
    return expires


def principal_for(conn: sqlite3.Connection, session_id: str, now: str) -> Principal | None:
    """The enabled user an unexpired session belongs to, or None."""
    row = conn.execute(LOOKUP, (id_hash(session_id), now)).fetchone()
    if row is None:
        return None
    return Principal(int(row["id"]), str(row["name"]), bool(row["admin"]))


def drop(conn: sqlite3.Connection, session_id: str) -> bool:
    return conn.execute(DELETE_ONE, (id_hash(session_id),)).rowcount > 0


def drop_for_user(conn: sqlite3.Connection, user_id: int) -> int:
    """End every browser session of ``user_id`` (disable, remove, password reset)."""
    return conn.execute(DELETE_FOR_USER, (user_id,)).rowcount
