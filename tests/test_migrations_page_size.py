"""A new database stores 2 KB pages; one made with 4 KB pages keeps them and all it holds.

Real SQLite files opened by the real writer connection and the real migrations.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.core.text import fts_text
from ai_memory.runtime import Runtime
from ai_memory.store.db import AUTO_VACUUM_INCREMENTAL, PAGE_SIZE, connect_writer
from ai_memory.store.migrations import SCHEMA_VERSION, current_version, migrate

BODY = "# Note {i}\n\n" + " ".join(f"word{n % 97} term{n % 13}" for n in range(180)) + "\n"


def pragma(path: Path, name: str) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute(f"PRAGMA {name}").fetchone()[0])
    finally:
        conn.close()


def test_a_new_database_takes_small_pages_and_incremental_vacuum(tmp_path: Path) -> None:
    path = tmp_path / "db" / "memory.sqlite"
    conn = connect_writer(path)
    migrate(conn)
    conn.close()
    assert pragma(path, "page_size") == PAGE_SIZE == 2048
    assert pragma(path, "auto_vacuum") == AUTO_VACUUM_INCREMENTAL


def test_a_database_with_4k_pages_keeps_them_and_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "db" / "memory.sqlite"
    path.parent.mkdir()
    old = sqlite3.connect(path, isolation_level=None)
    old.execute("PRAGMA page_size=4096")
    old.create_function("fts_text", 1, fts_text, deterministic=True)
    migrate(old)
    old.execute("CREATE TABLE kept (v TEXT)")
    old.execute("INSERT INTO kept VALUES ('still here')")
    old.close()
    conn = connect_writer(path)
    try:
        assert conn.execute("SELECT v FROM kept").fetchall()[0][0] == "still here"
        assert current_version(conn) == SCHEMA_VERSION
    finally:
        conn.close()
    assert pragma(path, "page_size") == 4096


def index_of(data_dir: Path, page_size: int | None, count: int) -> tuple[int, list[str]]:
    """Bytes of the database after ``count`` page writes, and what a search finds."""
    from ai_memory.maintenance.init import initialise

    if page_size is not None:  # a database made before this release: 4 KB pages
        path = Config.load(data_dir, {}).db_path
        path.parent.mkdir(parents=True)
        sqlite3.connect(path).execute(f"PRAGMA page_size={page_size}").execute("VACUUM").close()
    initialise(Config.load(data_dir, {}))
    runtime = Runtime.start(Config.load(data_dir, {}), search=False)
    scope = Scope.of(None, "sizes")
    try:
        for i in range(count):
            runtime.wiki.write_page(scope.page(f"notes/n{i}.md"), BODY.format(i=i))
        found = runtime.readers.read(
            lambda c: [
                str(r[0])
                for r in c.execute(
                    "SELECT p.path FROM pages_fts f JOIN pages p ON p.id = f.rowid "
                    "WHERE pages_fts MATCH 'word5 term3' ORDER BY rank, p.path LIMIT 20"
                )
            ]
        )
    finally:
        runtime.stop()
    db = Config.load(data_dir, {}).db_path
    return db.stat().st_size, found


def test_small_pages_hold_the_same_index_in_less_space(tmp_path: Path) -> None:
    old_size, old_found = index_of(tmp_path / "old", 4096, 120)
    new_size, new_found = index_of(tmp_path / "new", None, 120)
    assert pragma(Config.load(tmp_path / "old", {}).db_path, "page_size") == 4096
    assert pragma(Config.load(tmp_path / "new", {}).db_path, "page_size") == 2048
    assert new_found == old_found and len(new_found) == 20
    assert new_size < old_size
