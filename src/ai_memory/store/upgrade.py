"""Upgrading a data dir's database: refuse one from a newer release, back up before migrating.

Runs before the writer opens the database (whose start applies the migrations), so a
migration that goes wrong leaves a copy of the database exactly as the previous release
left it in ``backups/``.
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path

from ai_memory.core.clock import now_iso
from ai_memory.store.migrations import SCHEMA_VERSION, refuse_newer

log = logging.getLogger(__name__)


def schema_on_disk(db_path: Path) -> int | None:
    """The schema version of the database file, read-only; None when there is none yet."""
    if not db_path.exists():
        return None
    conn = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    try:
        row = conn.execute("SELECT max(version) FROM schema_migrations").fetchone()
    except sqlite3.OperationalError:
        return 0  # created, never migrated
    finally:
        conn.close()
    return int(row[0] or 0)


def refuse_newer_database(db_path: Path) -> None:
    """Before anything starts: a database from a newer release stops the server with a
    clear message, instead of a traceback from deep inside its start-up."""
    refuse_newer(schema_on_disk(db_path) or 0)


def prepare_upgrade(db_path: Path, backups_dir: Path) -> Path | None:
    """Refuse a newer database; copy an older one aside; return the copy, if one was made."""
    version = schema_on_disk(db_path)
    if version is None:
        return None
    refuse_newer(version)
    if version in (0, SCHEMA_VERSION):
        return None
    backups_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    stamp = now_iso().replace(":", "").replace("-", "")
    target = backups_dir / f"memory-schema{version}-{stamp}.sqlite"
    source = sqlite3.connect(f"{db_path.resolve().as_uri()}?mode=ro", uri=True)
    copy = sqlite3.connect(target)
    try:
        source.backup(copy)
    finally:
        copy.close()
        source.close()
    log.warning(
        "the database is at schema version %d, this release at %d: "
        "a copy was kept in %s before migrating",
        version,
        SCHEMA_VERSION,
        target,
    )
    return target
