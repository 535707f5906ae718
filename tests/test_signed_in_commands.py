"""Commands on a laptop signed in with ``ai-memory login`` and no data dir of its own:
backfill and the hygiene operations go to the signed-in server with the user's key; a
command that only reads a local data dir says so; none ever prints a traceback."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from tests.backfill_homes import agent_home, checkout
from tests.conftest import ServerProcess, clean_env, shared_server
from tests.team_support import cli_in_process, make_user


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with shared_server(tmp_path_factory, "signed-in") as proc:
        yield proc


def laptop(root: Path) -> dict[str, str]:
    """A machine's environment: its own HOME, config and (absent) data dir."""
    home = root / "laptop"
    return clean_env(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
    )


def signed_in(server: ServerProcess, root: Path, user: str, admin: bool = False) -> dict[str, str]:
    env = laptop(root)
    key = make_user(server, user, admin=admin)
    login = cli_in_process(
        "login", "--server", server.url, "--key-stdin", env=env, stdin=key.encode()
    )
    assert login.returncode == 0, login.stderr
    return env


def test_backfill_on_a_signed_in_laptop_imports_through_the_server_as_the_user(
    server: ServerProcess, tmp_path: Path
) -> None:
    env = signed_in(server, tmp_path, "hana")
    home = agent_home(tmp_path, checkout(tmp_path, "hana-shop"), ("claude-code",))
    done = cli_in_process("backfill", "--home", str(home), "--agent", "claude-code", env=env)
    assert done.returncode == 0, done.stderr
    assert "imported (server) 2 session(s)" in done.stdout
    assert not (tmp_path / "laptop" / ".local" / "share" / "ai-memory").exists()
    with closing(sqlite3.connect(server.data_dir / "db" / "memory.sqlite")) as conn:
        owners = conn.execute(
            "SELECT u.name FROM sessions s LEFT JOIN users u ON u.id = s.owner"
            " WHERE s.project = 'hana-shop'"
        ).fetchall()
    assert owners == [("hana",), ("hana",)]
    shown = cli_in_process("status", "-p", "hana-shop", env=env)  # a user's key: no health
    assert shown.returncode == 0, shown.stderr
    assert f"signed in to {server.url}" in shown.stdout and "sessions open" not in shown.stdout


def test_data_dir_commands_on_a_signed_in_laptop_use_the_server_or_say_where_they_run(
    server: ServerProcess, tmp_path: Path
) -> None:
    env = signed_in(server, tmp_path, "ivan", admin=True)
    purged = cli_in_process("purge-session", "nope", "--yes", env=env)
    assert purged.returncode == 1 and "no session 'nope'" in purged.stderr, purged.stderr
    exported = cli_in_process("export", "-p", "shop", "--to", str(tmp_path / "x"), env=env)
    assert exported.returncode == 1 and "run it on the server's machine" in exported.stderr
    reindexed = cli_in_process("reindex", env=env)  # direct-disk only: no server route
    assert reindexed.returncode == 1 and "no data dir at" in reindexed.stderr, reindexed.stderr
    assert "Traceback" not in purged.stderr + exported.stderr + reindexed.stderr


def test_data_dir_commands_with_no_data_dir_and_no_login_say_what_to_do(tmp_path: Path) -> None:
    env = laptop(tmp_path)
    nothing = str(tmp_path / "no-agents")
    for args in (
        ("purge-session", "nope", "--yes"),
        ("user", "list"),
        ("backfill", "--home", nothing),
    ):
        done = cli_in_process(*args, env=env)
        assert done.returncode == 1, (args, done.stdout, done.stderr)
        assert "no data dir at" in done.stderr and "ai-memory login" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
