"""Everything in the data dir is private (folders 0700, files 0600) whatever the umask."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.maintenance.backup import backup, restore
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, run_cli


@pytest.fixture(autouse=True)
def open_umask() -> Iterator[None]:
    """The usual umask (022), which would leave files world-readable; servers inherit it."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def open_entries(root: Path) -> list[tuple[str, str]]:
    """Every entry under ``root`` that its group or others may use."""
    found = []
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink() and mode(path) & 0o077:
            found.append((str(path.relative_to(root)), oct(mode(path))))
    return found


def test_init_creates_a_private_data_dir(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    assert mode(root) == 0o700
    for folder in ("wiki", "db", "spool", "logs", "backups", "auth-tokens"):
        assert mode(root / folder) == 0o700, folder
    for file in ("config.toml", "auth-tokens/default", "db/memory.sqlite"):
        assert mode(root / file) == 0o600, file
    assert open_entries(root) == []


def test_init_tightens_an_existing_open_data_dir(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    (root / "notes.txt").write_text("left by hand")
    os.chmod(root / "notes.txt", 0o666)
    result = run_cli("init", data_dir=root)
    assert result.returncode == 0, result.stderr
    assert b"private" in result.stderr
    assert mode(root) == 0o700 and mode(root / "wiki") == 0o700
    assert mode(root / "config.toml") == 0o600 and mode(root / "notes.txt") == 0o600
    assert mode(root / "auth-tokens/default") == 0o600
    assert open_entries(root) == []


def test_init_tightens_an_existing_empty_folder(tmp_path: Path) -> None:
    root = tmp_path / "data"
    root.mkdir(mode=0o755)
    os.chmod(root, 0o755)
    initialise(Config.load(root, {}))
    assert mode(root) == 0o700
    assert open_entries(root) == []


def test_a_served_data_dir_stays_private(data_dir: Path) -> None:
    os.chmod(data_dir / "config.toml", 0o644)  # as an older version left it
    server = ServerProcess(data_dir).start()
    try:
        with server.client() as client:
            put = client.put(
                "/api/v1/projects/default/modes/pages/concepts/a.md", json={"body": "private"}
            )
            assert put.is_success, put.text
            hook = client.post(
                "/hook",
                params={"project": "modes", "agent": "claude-code", "session_id": "s-1"},
                json={"hook_event_name": "UserPromptSubmit", "prompt": "hello"},
            )
            assert hook.is_success, hook.text
        db = data_dir / "db"
        for name in ("memory.sqlite", "memory.sqlite-wal", "memory.sqlite-shm"):
            assert mode(db / name) == 0o600, name
        assert mode(data_dir / "logs/server.log") == 0o600
        assert mode(data_dir / "config.toml") == 0o600
    finally:
        server.stop()
    (data_dir / "test-server.log").unlink()  # the fixture's own capture of the output
    assert open_entries(data_dir) == []


def test_backups_are_private(data_dir: Path, tmp_path: Path) -> None:
    config = Config.load(data_dir, {})
    inside = backup(config, config.backups_dir / "b.tar.gz")
    outside = backup(config, tmp_path / "new-folder" / "b.tar.gz")
    assert mode(inside) == 0o600 and mode(outside) == 0o600
    assert mode(outside.parent) == 0o700
    os.chmod(data_dir / "db" / "memory.sqlite", 0o644)
    aside = restore(config, inside)
    assert mode(aside) == 0o700
    assert mode(data_dir / "db") == 0o700 and mode(data_dir / "db" / "memory.sqlite") == 0o600
    assert open_entries(data_dir / "wiki") == [] and open_entries(data_dir / "db") == []


def test_a_reindex_outside_the_server_leaves_the_data_dir_private(data_dir: Path) -> None:
    page = data_dir / "wiki" / "default" / "modes" / "concepts" / "b.md"
    page.parent.mkdir(parents=True)
    page.write_text("# B\n\nwritten by hand\n", encoding="utf-8")
    os.chmod(page, 0o600)
    for folder in (page.parent, page.parent.parent, page.parent.parent.parent):
        os.chmod(folder, 0o700)  # a hand edit made privately; what reindex creates is the test
    result = run_cli("reindex", data_dir=data_dir)  # inherits the open umask of this test
    assert result.returncode == 0, result.stderr
    assert open_entries(data_dir) == []


def test_the_spool_is_private_whatever_the_agents_umask(tmp_path: Path) -> None:
    from ai_memory.hookclient import spool

    written = spool.write(tmp_path / "spool", spool.new_ingest_key(), {"body": {"prompt": "x"}})
    assert mode(Path(written)) == 0o600 and mode(Path(written).parent) == 0o700
