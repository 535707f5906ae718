"""Applying the numbered schema migrations (the scripts are in ``migration_scripts``)."""

from __future__ import annotations

import sqlite3

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import SchemaTooNew
from ai_memory.store.migration_scripts import MIGRATIONS, PAGE_TOKENIZER

__all__ = ["MIGRATIONS", "PAGE_TOKENIZER", "SCHEMA_VERSION", "current_version", "migrate"]

SCHEMA_VERSION = len(MIGRATIONS)


def current_version(conn: sqlite3.Connection) -> int:
    """The schema version of a database; works on read-only connections."""
    row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    return int(row[0] or 0)


def refuse_newer(version: int) -> None:
    """A database written by a newer release is never opened: this code could damage it."""
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"the database is at schema version {version}, but this release of ai-memory "
            f"knows only up to {SCHEMA_VERSION}; upgrade ai-memory or restore a backup"
        )


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema up to date; refuse a database written by a newer release."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations "
        "(version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    version = current_version(conn)
    refuse_newer(version)
    for number in range(version + 1, SCHEMA_VERSION + 1):
        script = MIGRATIONS[number - 1]
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(script):
                conn.execute(statement)
            conn.execute(
                "INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)",
                (number, now_iso()),
            )
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
    return SCHEMA_VERSION


def _statements(script: str) -> list[str]:
    """Split a migration into statements; sqlite3.complete_statement knows the grammar."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
