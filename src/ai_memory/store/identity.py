"""Users and their API keys (migration 16). Keys are stored as hashes only."""

from __future__ import annotations

import sqlite3

from ai_memory.core import apikeys
from ai_memory.core.principal import Principal
from ai_memory.store import web_sessions

KEY_ROW = """
SELECT k.id AS key_id, k.secret_hash, k.revoked_at, u.id AS user_id, u.name, u.admin,
       u.disabled_at
FROM api_keys k JOIN users u ON u.id = k.user_id
WHERE k.prefix = ?
"""
INSERT_USER = "INSERT INTO users(name, admin, created_at) VALUES (?, ?, ?)"
INSERT_KEY = """
INSERT INTO api_keys(user_id, prefix, secret_hash, label, created_at) VALUES (?, ?, ?, ?, ?)
"""
TOUCH_KEY = "UPDATE api_keys SET last_used_at = ? WHERE id = ?"
HAS_USERS = "SELECT EXISTS (SELECT 1 FROM users)"


def principal_for_key(conn: sqlite3.Connection, presented: str) -> Principal | None:
    """The user a presented key authenticates, or None (unknown, revoked, disabled)."""
    prefix = apikeys.parse_prefix(presented)
    if prefix is None:
        return None
    row = conn.execute(KEY_ROW, (prefix,)).fetchone()
    if row is None or not apikeys.matches(presented, row["secret_hash"]):
        return None
    return _live_key_user(row)


def principal_for_key_id(conn: sqlite3.Connection, prefix: str) -> Principal | None:
    """The user of the live key with public id ``prefix`` (None: unknown, revoked,
    disabled): whose events the server's own spool drain stores, without the secret."""
    row = conn.execute(KEY_ROW, (prefix,)).fetchone()
    return None if row is None else _live_key_user(row)


def _live_key_user(row: sqlite3.Row) -> Principal | None:
    """The key's user, unless the key is revoked or its user disabled."""
    if row["revoked_at"] is not None or row["disabled_at"] is not None:
        return None
    return Principal(int(row["user_id"]), str(row["name"]), bool(row["admin"]), int(row["key_id"]))


def create_user(conn: sqlite3.Connection, name: str, *, admin: bool, now: str) -> int:
    cursor = conn.execute(INSERT_USER, (name, int(admin), now))
    return int(cursor.lastrowid or 0)


def create_key(
    conn: sqlite3.Connection, user_id: int, *, label: str, now: str
) -> tuple[int, apikeys.NewKey]:
    """A new key for ``user_id``; the caller shows ``NewKey.full`` once and forgets it."""
    key = apikeys.generate()
    cursor = conn.execute(INSERT_KEY, (user_id, key.prefix, key.secret_hash, label, now))
    return int(cursor.lastrowid or 0), key


def touch_key(conn: sqlite3.Connection, key_id: int, now: str) -> None:
    conn.execute(TOUCH_KEY, (now, key_id))


def has_users(conn: sqlite3.Connection) -> bool:
    return bool(conn.execute(HAS_USERS).fetchone()[0])


# -- administration: listing, disabling, removing users; listing and revoking keys ----------

USERS = """
SELECT u.id, u.name, u.admin, u.created_at, u.disabled_at, u.removed_at,
       (SELECT COUNT(*) FROM api_keys k WHERE k.user_id = u.id AND k.revoked_at IS NULL)
           AS active_keys
FROM users u WHERE u.removed_at IS NULL ORDER BY u.name
"""
USER_BY_NAME = """
SELECT id, name, admin, created_at, disabled_at, removed_at FROM users WHERE name = ?
"""
SET_DISABLED = "UPDATE users SET disabled_at = ? WHERE id = ?"
MARK_REMOVED = """
UPDATE users SET disabled_at = COALESCE(disabled_at, ?), removed_at = ? WHERE id = ?
"""
REVOKE_USER_KEYS = "UPDATE api_keys SET revoked_at = ? WHERE user_id = ? AND revoked_at IS NULL"
DROP_USER_GRANTS = "DELETE FROM project_grants WHERE user_id = ?"
KEYS = """
SELECT k.prefix, k.label, k.created_at, k.last_used_at, k.revoked_at, u.name AS user
FROM api_keys k JOIN users u ON u.id = k.user_id
WHERE (:user_id IS NULL OR k.user_id = :user_id)
ORDER BY k.created_at, k.id
"""
KEY_BY_PREFIX = """
SELECT k.id, k.prefix, k.label, k.created_at, k.last_used_at, k.revoked_at, u.name AS user
FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.prefix = ?
"""
REVOKE_KEY = "UPDATE api_keys SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL"
# A key counts as active while it is not revoked and its user may sign in.
COUNTS = """
SELECT (SELECT COUNT(*) FROM users WHERE disabled_at IS NULL) AS users,
       (SELECT COUNT(*) FROM api_keys k JOIN users u ON u.id = k.user_id
        WHERE k.revoked_at IS NULL AND u.disabled_at IS NULL) AS active_keys
"""


def users(conn: sqlite3.Connection) -> list[sqlite3.Row]:
    """Every user not removed, by name."""
    return list(conn.execute(USERS))


def user_row(conn: sqlite3.Connection, name: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(USER_BY_NAME, (name,)).fetchone()
    return row


def set_disabled(conn: sqlite3.Connection, user_id: int, when: str | None) -> None:
    """Disable (``when`` set) or enable (None) a user; a disabled user's web sessions end."""
    conn.execute(SET_DISABLED, (when, user_id))
    if when is not None:
        web_sessions.drop_for_user(conn, user_id)


def remove_user(conn: sqlite3.Connection, user_id: int, now: str) -> tuple[int, int]:
    """Revoke every key, drop grants and web sessions; keep the row owned rows point at.

    Returns (keys revoked, grants dropped). The row stays so an owner id never
    comes to name somebody else: ids are not reused and neither is the name.
    """
    keys = conn.execute(REVOKE_USER_KEYS, (now, user_id)).rowcount
    grants = conn.execute(DROP_USER_GRANTS, (user_id,)).rowcount
    web_sessions.drop_for_user(conn, user_id)
    conn.execute(MARK_REMOVED, (now, now, user_id))
    return keys, grants


def keys(conn: sqlite3.Connection, user_id: int | None) -> list[sqlite3.Row]:
    """Keys (of one user, or all) without their hashes."""
    return list(conn.execute(KEYS, {"user_id": user_id}))


def key_row(conn: sqlite3.Connection, prefix: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(KEY_BY_PREFIX, (prefix,)).fetchone()
    return row


def revoke_key(conn: sqlite3.Connection, key_id: int, now: str) -> bool:
    return conn.execute(REVOKE_KEY, (now, key_id)).rowcount > 0


def counts(conn: sqlite3.Connection) -> dict[str, int]:
    """Users who may sign in and their usable keys, for status."""
    row = conn.execute(COUNTS).fetchone()
    return {"users": int(row["users"]), "active_keys": int(row["active_keys"])}
