"""``ai-memory status``: the server's health after the counts, and the index alone without it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import ServerProcess, clean_env, run_cli


def test_status_shows_queue_spool_checkpoint_and_embedder(server: ServerProcess) -> None:
    with server.client() as client:
        client.put("/api/v1/projects/default/cli/pages/a.md", json={"body": "a"})
    shown = run_cli("status", "--server", server.url, "-p", "cli", data_dir=server.data_dir)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout.decode()
    for label in ("sessions open", "writer", "spool", "last checkpoint", "embedder"):
        assert label in text, label
    assert "longest wait" in text and "hook answers" in text
    as_json = run_cli("status", "--json", "--server", server.url, data_dir=server.data_dir)
    health = json.loads(as_json.stdout)["health"]
    assert health["data_dir"] == str(server.data_dir.resolve())
    assert health["writer"]["longest_recent_wait_ms"] > 0  # the page written above waited


def test_status_without_a_server_reads_the_index_read_only(data_dir: Path) -> None:
    shown = run_cli("status", "--server", "http://127.0.0.1:9", "--json", data_dir=data_dir)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["local"] is True and data["health"] is None and data["pages"] == 0
    assert b"reading the index read-only" in shown.stderr


def test_commands_on_the_servers_machine_reach_it_at_the_bind_its_lock_records(
    server: ServerProcess, tmp_path: Path
) -> None:
    """The server binds a port other than server.url's: status, admin and a user's status
    find it through server.lock instead of refusing or reading the index."""
    from tests.team_support import cli_in_process, make_user

    home = tmp_path / "home"
    env = clean_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    where = ("--data-dir", str(server.data_dir))
    shown = cli_in_process("status", "--json", *where, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "read-only" not in shown.stderr and json.loads(shown.stdout)["health"] is not None
    added = cli_in_process("user", "add", "lockbind", *where, env=env)
    assert added.returncode == 0 and "stop it first" not in added.stderr, added.stderr
    key = make_user(server, "plainuser")
    as_user = {**env, "AI_MEMORY_AUTH_TOKEN": key}
    mine = cli_in_process("status", "--json", "-p", "cli", *where, env=as_user)
    assert mine.returncode == 0, mine.stderr  # /admin/status is for admins: the counts alone
    assert json.loads(mine.stdout)["health"] is None
    table = cli_in_process("status", "-p", "cli", *where, env=as_user)
    assert table.returncode == 0 and "sessions" in table.stdout, table.stderr


def test_the_lock_names_a_running_servers_address_and_a_stale_one_nothing(tmp_path: Path) -> None:
    from ai_memory.cli.options import running_url
    from ai_memory.maintenance.lock import ServerLock

    assert running_url(tmp_path) is None  # no lock file
    for bind, url in (("127.0.0.1:5", "http://127.0.0.1:5"), ("0.0.0.0:7", "http://127.0.0.1:7")):
        lock = ServerLock(tmp_path)
        lock.acquire(bind=bind)
        try:
            assert running_url(tmp_path) == url
        finally:
            lock.release()
        assert running_url(tmp_path) is None  # the file stays; nobody holds it
