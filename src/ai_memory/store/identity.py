"""Users and their API keys (migration 16). Keys are stored as hashes only."""

from __future__ import annotations

import sqlite3

from ai_memory.core import apikeys
from ai_memory.core.principal import Principal

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
