"""Users' web sign-in passwords: argon2id hashes (argon2-cffi), never the password itself.

Hashing and checking are slow on purpose (tens of milliseconds), so they run
outside the writer and the reader pool: the caller hashes, then the writer
stores the hash; the caller reads the account, then checks the password in a
worker thread. Setting a password drops the user's web sessions, so a reset
signs out every browser that used the old one.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from dataclasses import dataclass
from typing import Any

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

from ai_memory.core.errors import InvalidInput
from ai_memory.core.principal import Principal
from ai_memory.store import identity_admin, pages, web_sessions

MIN_LENGTH = 8
MAX_LENGTH = 1024  # argon2 takes any length; a cap keeps one request's work bounded
# OWASP's argon2id floor (19 MiB, 2 passes, 1 lane): tens of milliseconds on one core,
# and a bounded amount of memory per sign-in in flight. A stored hash names its own
# parameters, so hashes made with other ones still check.
TIME_COST, MEMORY_KIB, LANES = 2, 19456, 1
# Checked when the name is unknown, so a wrong name costs the same time as a wrong password.
_NO_SUCH_USER = (
    "$argon2id$v=19$m=19456,t=2,p=1$nZWGFeNRTjSFh9ksVnzsKw"
    "$VBwpBIH17m4I00pMsdyYBZK95X7RYItDVsf4UMOTUMs"
)

ACCOUNT = """
SELECT id, name, admin, password_hash, disabled_at, removed_at FROM users WHERE name = ?
"""
SET_HASH = "UPDATE users SET password_hash = ? WHERE id = ?"
ANY_PASSWORD = """
SELECT EXISTS (SELECT 1 FROM users WHERE password_hash IS NOT NULL AND disabled_at IS NULL)
"""


@dataclass(frozen=True, slots=True)
class Account:
    """A user as sign-in sees one: who, and the hash to check (None: no password set)."""

    principal: Principal
    password_hash: str | None
    disabled: bool


def check_rules(password: str) -> None:
    """A password the server accepts: 8 to 1024 characters, not only spaces, and no control
    characters (NUL, escape, newline...: no keyboard types them into a sign-in form)."""
    if len(password) < MIN_LENGTH:
        raise InvalidInput(f"a password needs at least {MIN_LENGTH} characters")
    if not password.strip():
        raise InvalidInput("a password may not be only spaces")
    if len(password) > MAX_LENGTH:
        raise InvalidInput(f"a password may have at most {MAX_LENGTH} characters")
    if any(unicodedata.category(char) == "Cc" for char in password):
        raise InvalidInput("a password may not hold control characters (NUL, tab, escape...)")


def hash_password(password: str) -> str:
    check_rules(password)
    return _hasher().hash(password)


def password_matches(password_hash: str | None, password: str) -> bool:
    """Constant work whether or not there is a hash; any input is accepted, none raises."""
    if len(password) > MAX_LENGTH:
        return False
    try:
        return _hasher().verify(password_hash or _NO_SUCH_USER, password) and bool(password_hash)
    except (VerificationError, InvalidHashError):
        return False


def _hasher() -> PasswordHasher:
    return PasswordHasher(time_cost=TIME_COST, memory_cost=MEMORY_KIB, parallelism=LANES)


def account(conn: sqlite3.Connection, name: str) -> Account | None:
    row = conn.execute(ACCOUNT, (name,)).fetchone()
    if row is None:
        return None
    principal = Principal(int(row["id"]), str(row["name"]), bool(row["admin"]))
    disabled = row["disabled_at"] is not None or row["removed_at"] is not None
    return Account(principal, row["password_hash"], disabled)


def set_password(
    conn: sqlite3.Connection, name: str, password_hash: str, *, now: str
) -> dict[str, Any]:
    """Store ``password_hash`` for ``name`` and sign out its browsers; audited, no hash in it."""
    user_id = int(identity_admin.existing_user(conn, name)["id"])
    conn.execute(SET_HASH, (password_hash, user_id))
    ended = web_sessions.drop_for_user(conn, user_id)
    detail = {"user": name, "sessions_ended": ended}
    pages.audit(conn, now=now, actor=identity_admin.ACTOR, action="user-passwd", detail=detail)
    return {"user": name, "sessions_ended": ended}


def any_password(conn: sqlite3.Connection) -> bool:
    """True once an enabled user has a password: the token then no longer signs in to /web."""
    return bool(conn.execute(ANY_PASSWORD).fetchone()[0])
