"""Upgrading a data dir made by the previous release: data carried forward, a backup first,
and a database from a newer release refused with a clear message."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.core.errors import SchemaTooNew
from ai_memory.maintenance.init import initialise
from ai_memory.store.db import connect_writer
from ai_memory.store.migrations import MIGRATIONS, SCHEMA_VERSION, _statements
from ai_memory.store.upgrade import prepare_upgrade, schema_on_disk
from tests.conftest import ServerProcess, clean_env, run_cli

PREVIOUS = SCHEMA_VERSION - 1
NOW = "2026-11-30T10:00:00.000000Z"


def previous_release_data_dir(root: Path) -> Path:
    """A data dir whose database stopped at the schema before the latest, with rows in it."""
    config = Config.load(root, {})
    initialise(config)
    for suffix in ("", "-wal", "-shm"):
        Path(f"{config.db_path}{suffix}").unlink(missing_ok=True)
    conn = connect_writer(config.db_path)
    conn.execute(
        "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    for number, script in enumerate(MIGRATIONS[:PREVIOUS], start=1):
        for statement in _statements(script):
            conn.execute(statement)
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (number, NOW))
    conn.execute("INSERT INTO workspaces VALUES ('default', ?)", (NOW,))
    conn.execute(
        "INSERT INTO projects (workspace, name, remote, created_at)"
        " VALUES ('default', 'shop', NULL, ?)",
        (NOW,),
    )
    conn.execute(
        "INSERT INTO sessions (workspace, project, session_id, agent, started_at, last_event_at)"
        " VALUES ('default', 'shop', 'old-1', 'codex', ?, ?)",
        (NOW, NOW),
    )
    conn.execute(
        "INSERT INTO observations (workspace, project, session_id, agent, kind, ingest_key, body,"
        " created_at) VALUES ('default', 'shop', 'old-1', 'codex', 'user-prompt', 'k-1',"
        " 'migrate the cart table', ?)",
        (NOW,),
    )
    conn.execute(
        "INSERT INTO handoffs (workspace, project, origin, status, summary, created_at)"
        " VALUES ('default', 'shop', 'manual', 'open', 'finish the cart migration', ?)",
        (NOW,),
    )
    conn.close()
    return root


def test_a_previous_release_data_dir_is_backed_up_then_carried_forward(tmp_path: Path) -> None:
    data_dir = previous_release_data_dir(tmp_path / "data")
    assert schema_on_disk(data_dir / "db" / "memory.sqlite") == PREVIOUS
    server = ServerProcess(data_dir).start()
    try:
        with server.client() as client:
            sessions = client.get("/api/v1/sessions", params={"project": "shop"}).json()
            observed = client.get(
                "/api/v1/sessions/old-1/observations", params={"project": "shop"}
            ).json()
            handoffs = client.get("/api/v1/handoffs", params={"project": "shop"}).json()
        assert [s["session_id"] for s in sessions["sessions"]] == ["old-1"]
        assert [o["body"] for o in observed["observations"]] == ["migrate the cart table"]
        assert [h["summary"] for h in handoffs["handoffs"]] == ["finish the cart migration"]
        home = clean_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
        status = run_cli("status", "--server", server.url, "--json", data_dir=data_dir, env=home)
        assert status.returncode == 0, status.stderr
        install = json.loads(status.stdout)["install"]
        assert install["code_schema"] == install["database_schema"] == SCHEMA_VERSION
    finally:
        server.stop()
    assert schema_on_disk(data_dir / "db" / "memory.sqlite") == SCHEMA_VERSION
    (backup,) = (data_dir / "backups").glob(f"memory-schema{PREVIOUS}-*.sqlite")
    assert schema_on_disk(backup) == PREVIOUS
    conn = sqlite3.connect(backup)
    try:
        assert conn.execute("SELECT body FROM observations").fetchall() == [
            ("migrate the cart table",)
        ]
    finally:
        conn.close()
    # The next start finds nothing to migrate, so it makes no second copy.
    ServerProcess(data_dir).start().stop()
    assert len(list((data_dir / "backups").glob("*.sqlite"))) == 1


def test_a_database_from_a_newer_release_is_refused_and_left_alone(data_dir: Path) -> None:
    db = data_dir / "db" / "memory.sqlite"
    conn = sqlite3.connect(db)
    with conn:
        conn.execute("INSERT INTO schema_migrations VALUES (?, ?)", (SCHEMA_VERSION + 1, NOW))
    conn.close()
    before = db.read_bytes()
    served = run_cli("serve", "--bind", "127.0.0.1:9", data_dir=data_dir)
    assert served.returncode == 1
    message = f"the database is at schema version {SCHEMA_VERSION + 1}, but this release"
    assert message.encode() in served.stderr
    assert b"upgrade ai-memory or restore a backup" in served.stderr
    assert b"Traceback" not in served.stderr
    home = clean_env(HOME=str(data_dir), XDG_CONFIG_HOME=str(data_dir / "config"))
    status = run_cli("status", data_dir=data_dir, env=home)
    assert b"the database is newer than this release" in status.stdout
    with pytest.raises(SchemaTooNew):
        prepare_upgrade(db, data_dir / "backups")
    assert db.read_bytes() == before
    assert not list((data_dir / "backups").glob("*.sqlite"))
