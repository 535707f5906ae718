"""What a signed-in machine is told about its credential: overrides, refusals, passwords.

One server for the module. ``login`` names the variables that take precedence over
the key it stores; once that key is revoked, the CLI, the MCP bridge and the hook
log say which key was refused and how to replace it, never the secret; ``user
passwd`` says what is wrong (no terminal, no such user) before judging a password.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, clean_env
from tests.hooks_support import make_checkout, run_hook
from tests.team_support import cli_in_process, make_key, make_user, revoke_key

BRIDGE = [sys.executable, "-m", "ai_memory", "mcp-bridge"]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("advice")
    initialise(Config.load(root / "data", {}))
    server = ServerProcess(root / "data").start()
    try:
        yield server
    finally:
        server.stop()


def laptop(home: Path, **extra: str) -> dict[str, str]:
    """A user's machine: its own home, config and data dir."""
    return clean_env(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / "config"),
        XDG_DATA_HOME=str(home / "data"),
        **extra,
    )


def login(server: ServerProcess, key: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    args = ("login", "--server", server.url, "--key-stdin")
    return cli_in_process(*args, env=env, stdin=key.encode() + b"\n")


def test_login_names_the_variables_that_override_the_stored_key(
    server: ServerProcess, tmp_path: Path
) -> None:
    key = make_user(server, "kim")
    token = "an-exported-operator-token"
    exported = laptop(tmp_path, AI_MEMORY_AUTH_TOKEN=token, AI_MEMORY_SERVER_URL=server.url)
    done = login(server, key, exported)
    assert done.returncode == 0, done.stderr
    assert "AI_MEMORY_AUTH_TOKEN, AI_MEMORY_SERVER_URL" in done.stderr
    assert "take precedence" in done.stderr and "now use it" not in done.stdout
    shown = done.stdout + done.stderr
    assert token not in shown and key not in shown and server.url + "," not in shown
    plain = login(server, key, laptop(tmp_path))
    assert plain.returncode == 0 and "now use it" in plain.stdout
    assert "precedence" not in plain.stderr


def test_a_revoked_stored_key_is_named_with_how_to_replace_it(
    server: ServerProcess, tmp_path: Path
) -> None:
    key = make_user(server, "rob")
    env = laptop(tmp_path / "home")
    assert login(server, key, env).returncode == 0
    revoke_key(server, key)
    public = key[: len("aim_") + 10]
    advice = f"the API key {public} stored by `ai-memory login` was refused"
    again = f"`ai-memory login --server {server.url} --key-stdin` with a new key"

    cli = cli_in_process("search", "hello", env=env)
    assert cli.returncode == 1
    assert advice in cli.stderr and again in cli.stderr
    assert "unknown, revoked, or its user is disabled" in cli.stderr

    ping = '{"jsonrpc":"2.0","id":1,"method":"ping"}\n'
    bridge = subprocess.run(BRIDGE, input=ping, capture_output=True, text=True, env=env, timeout=30)
    assert bridge.returncode == 1 and advice in bridge.stderr and again in bridge.stderr
    assert "AI_MEMORY_AUTH_TOKEN" not in bridge.stderr

    checkout = make_checkout(tmp_path / "shop")
    payload = {"session_id": "rob-1", "cwd": str(checkout), "hook_event_name": "SessionStart"}
    run_hook("claude-code", "SessionStart", payload, env, checkout)
    log = (tmp_path / "home" / "data" / "ai-memory" / "logs" / "hook.log").read_text()
    assert "(401)" in log and advice in log and again in log
    secret = key.split("_", 2)[2]
    for shown in (cli.stdout + cli.stderr, bridge.stderr, log):
        assert secret not in shown


def test_passwd_without_a_terminal_points_to_password_stdin(server: ServerProcess) -> None:
    make_user(server, "pat")
    admin = ("--server", server.url, "--data-dir", str(server.data_dir))
    done = cli_in_process("user", "passwd", "pat", *admin, env=clean_env(), stdin=b"")
    assert done.returncode == 1
    assert "no terminal" in done.stderr and "--password-stdin" in done.stderr
    assert "Aborted" not in done.stderr + done.stdout and "GetPass" not in done.stderr


def test_passwd_for_no_such_user_says_so_before_judging_the_password(
    server: ServerProcess,
) -> None:
    admin = ("--server", server.url, "--data-dir", str(server.data_dir))
    args = ("user", "passwd", "nobody", "--password-stdin", *admin)
    done = cli_in_process(*args, env=clean_env(), stdin=b"short\n")
    assert done.returncode != 0 and "no user named 'nobody'" in done.stderr
    assert "characters" not in done.stderr


def test_events_an_earlier_key_spooled_are_set_aside_or_sent_with_the_current_key(
    server: ServerProcess, tmp_path: Path
) -> None:
    env = laptop(tmp_path / "home")
    spooled = tmp_path / "home" / "data" / "ai-memory" / "spool"
    checkout = make_checkout(tmp_path / "shop")

    def spool_with_a_revoked_key(session: str) -> None:
        key = make_key(server, "una")
        assert login(server, key, env).returncode == 0
        revoke_key(server, key)
        payload = {"session_id": session, "cwd": str(checkout), "prompt": "tune the cache"}
        run_hook("claude-code", "UserPromptSubmit", payload, env, checkout)
        assert login(server, make_key(server, "una"), env).returncode == 0

    make_user(server, "una")
    spool_with_a_revoked_key("una-1")
    doctor = json.loads(cli_in_process("doctor", "--json", env=env).stdout)
    found = [f for f in doctor["findings"] if f["check"] == "spool"]
    assert "1 of them captured with another key" in found[0]["message"]
    assert found[0]["fix"].startswith("ai-memory hook-drain --as-current-key")
    kept = cli_in_process("hook-drain", env=env)
    assert kept.returncode == 0 and "1 captured with another key" in kept.stdout
    assert "--as-current-key" in kept.stdout and "--discard-other-keys" in kept.stdout
    both = cli_in_process("hook-drain", "--as-current-key", "--discard-other-keys", env=env)
    assert both.returncode == 1 and "not both" in both.stderr
    dropped = cli_in_process("hook-drain", "--discard-other-keys", env=env)
    assert "set aside 1 event(s)" in dropped.stdout and "nothing left" in dropped.stdout
    assert len(list((spooled / "rejected").glob("*.json"))) == 1

    spool_with_a_revoked_key("una-2")
    sent = cli_in_process("hook-drain", "--as-current-key", env=env)
    assert sent.returncode == 0, sent.stderr
    assert "delivered 1 event(s)" in sent.stdout and not list(spooled.glob("*.json"))
    with server.client() as root:  # the hook queue is stored before this answers
        assert root.post("/api/v1/sessions/flush", params={"timeout": 60}).json()["pending"] == 0
    with sqlite3.connect(server.data_dir / "db" / "memory.sqlite") as conn:
        owners = dict(conn.execute(OWNERS, ("una-1", "una-2")).fetchall())
    assert owners == {"una-2": "una"}


OWNERS = """
SELECT s.session_id, u.name FROM sessions s JOIN users u ON u.id = s.owner
WHERE s.session_id IN (?, ?)
"""
