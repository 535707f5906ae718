"""``doctor`` and ``setup`` on a laptop signed in with ``ai-memory login``: the team server.

Such a laptop has no data dir of its own; its hooks send the stored key to the signed-in
server, so both commands check that server and key, and never ask for `init` or `serve`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.cli import hook_install
from ai_memory.cli.login import write_credential
from ai_memory.doctor.findings import Finding, Severity, worst
from ai_memory.doctor.run import run_checks
from tests.conftest import ServerProcess, clean_env, free_port, shared_server
from tests.team_support import cli_in_process, make_user, revoke_key


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with shared_server(tmp_path_factory, "signed-in") as proc:
        yield proc


def laptop(tmp_path: Path, server: ServerProcess, key: str, agent: bool = True) -> dict[str, str]:
    """A machine's environment: its own HOME (with Claude Code unless ``agent`` is false),
    no data dir, signed in with ``key``."""
    home = tmp_path / "home"
    (home / ".claude" if agent else home).mkdir(parents=True)
    env = clean_env(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    write_credential(home / ".config" / "ai-memory" / "client.toml", server.url, key)
    return env


def by_check(env: dict[str, str]) -> dict[str, Finding]:
    return {f.check: f for f in run_checks(None, Path(env["HOME"]), env, timeout_s=5)}


def test_doctor_checks_the_signed_in_server_and_skips_the_local_install(
    team: ServerProcess, tmp_path: Path
) -> None:
    env = laptop(tmp_path, team, make_user(team, "lena"), agent=False)
    found = by_check(env)
    assert worst(found.values()) == Severity.OK, found
    assert not {"data_dir", "token", "server", "capture", "index"} & found.keys()
    assert f"signed in to {team.url}" in found["signed_in"].message
    assert "skipped" in found["signed_in"].message
    assert "signed in as lena" in found["whoami"].message


def test_doctor_names_a_revoked_key_by_its_prefix_and_says_sign_in_again(
    team: ServerProcess, tmp_path: Path
) -> None:
    key = make_user(team, "mo")
    env = laptop(tmp_path, team, key)
    revoke_key(team, key)
    done = cli_in_process("doctor", "--json", env=env)
    assert done.returncode == 2, done
    secret = key.split("_", 2)[2]  # the secret may hold "_" itself
    assert key not in done.stdout and secret not in done.stdout
    found = {f["check"]: f for f in json.loads(done.stdout)["findings"]}
    whoami = found["whoami"]
    assert whoami["severity"] == "error"
    assert f"aim_{key.split('_')[1]}" in whoami["message"]
    assert whoami["fix"].startswith(f"ai-memory login --server {team.url} --key-stdin")
    assert "server" not in found and "token" not in found


def test_setup_on_a_signed_in_laptop_installs_without_a_local_data_dir(
    team: ServerProcess, tmp_path: Path
) -> None:
    env = laptop(tmp_path, team, make_user(team, "nia"))
    done = cli_in_process("setup", "--agent", "claude-code", "--no-service", env=env)
    assert done.returncode == 0, done
    assert f"signed in to {team.url} as nia" in done.stdout
    assert "ai-memory serve" not in done.stdout + done.stderr
    data = Path(env["XDG_DATA_HOME"]) / "ai-memory"
    assert not (data / "auth-tokens").exists() and not (data / "db").exists()
    found = by_check(env)
    assert worst(found.values()) == Severity.OK, found
    assert found["hooks:claude-code"].severity == Severity.OK
    assert found["mcp:claude-code"].severity == Severity.OK


def test_setup_with_a_revoked_key_stops_before_writing_anything(
    team: ServerProcess, tmp_path: Path
) -> None:
    key = make_user(team, "olu")
    env = laptop(tmp_path, team, key)
    revoke_key(team, key)
    done = cli_in_process("setup", "--agent", "claude-code", "--no-service", env=env)
    assert done.returncode != 0
    assert f"aim_{key.split('_')[1]}" in done.stderr and key not in done.stderr
    assert f"ai-memory login --server {team.url} --key-stdin" in done.stderr
    assert not (Path(env["HOME"]) / ".claude" / "settings.json").exists()


def test_an_unreachable_signed_in_server_is_named_and_serve_is_never_advised(
    team: ServerProcess, tmp_path: Path
) -> None:
    gone = ServerProcess(team.data_dir, port=free_port())  # never started: nothing listens
    env = laptop(tmp_path, gone, make_user(team, "pia"))
    whoami = by_check(env)["whoami"]
    assert whoami.severity == Severity.ERROR and f"nothing answers at {gone.url}" in whoami.message
    done = cli_in_process("setup", "--agent", "claude-code", "--no-service", env=env)
    assert done.returncode != 0
    assert f"cannot reach {gone.url}, the server this machine is signed in to" in done.stderr
    for shown in (done.stdout + done.stderr, whoami.fix or ""):
        assert "ai-memory serve" not in shown and "ai-memory init" not in shown


def test_doctor_flags_hooks_aimed_at_another_server_than_the_signed_in_one(
    team: ServerProcess, tmp_path: Path
) -> None:
    env = laptop(tmp_path, team, make_user(team, "quin"))
    elsewhere = "http://127.0.0.1:49374"
    path = hook_install.settings_path("claude-code", Path(env["HOME"]))
    path.write_text(
        hook_install.render(hook_install.install({}, "claude-code", None, None, elsewhere))
    )
    hooks = by_check(env)["hooks:claude-code"]
    assert hooks.severity == Severity.ERROR and f"point at {elsewhere}" in hooks.message
