"""Users and project access with no server: the CLI in process, and hygiene carrying rules.

With no server owning the data dir, ``user``/``api-key``/``project`` change it
in this process as the operator. A project's rename, move or merge carries its
visibility, creator and grants to where it goes.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from ai_memory.core.clock import now_iso
from ai_memory.core.identity import Scope
from ai_memory.core.principal import Principal
from ai_memory.hygiene.merge import merge_project
from ai_memory.hygiene.projects import move_project, rename_project
from ai_memory.runtime import Runtime
from ai_memory.store import identity, identity_admin
from ai_memory.store.acting import act_as, restore
from tests.conftest import clean_env, run_cli
from tests.team_support import cli_in_process


def test_the_cli_changes_the_data_dir_in_process_with_no_server(
    data_dir: Path, tmp_path: Path
) -> None:
    env = clean_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"))
    added = run_cli("user", "add", "ivy", "--admin", data_dir=data_dir, env=env)
    assert added.returncode == 0 and b"added admin ivy" in added.stdout, added.stderr
    where = ("--data-dir", str(data_dir))  # the rest in this process, through the real entry
    made = cli_in_process("api-key", "create", "--user", "ivy", "--json", *where, env=env)
    key = json.loads(made.stdout)["key"]
    listed = cli_in_process("user", "list", "--json", *where, env=env)
    assert json.loads(listed.stdout)["users"][0]["active_keys"] == 1
    twice = cli_in_process("user", "add", "ivy", *where, env=env)
    assert twice.returncode == 1 and "already exists" in twice.stderr
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    conn.row_factory = sqlite3.Row
    try:
        assert identity.principal_for_key(conn, key) == Principal(1, "ivy", True, 1)
        audit = conn.execute("SELECT action, user_name, detail FROM audit_log").fetchall()
    finally:
        conn.close()
    assert [(r["action"], r["user_name"]) for r in audit] == [
        ("user-add", "root"),
        ("api-key-create", "root"),
    ]
    assert all(key not in r["detail"] for r in audit)


def _setup(runtime: Runtime) -> tuple[int, int]:
    """Users ann (creator) and ben (reader); project default/src restricted, by ann."""
    now = now_iso()

    def users(conn: sqlite3.Connection) -> tuple[int, int]:
        identity_admin.add_user(conn, "ann", admin=False, now=now)
        identity_admin.add_user(conn, "ben", admin=False, now=now)
        ann, ben = identity.user_row(conn, "ann"), identity.user_row(conn, "ben")
        assert ann is not None and ben is not None
        return int(ann["id"]), int(ben["id"])

    ann, ben = runtime.writer.call(users)
    token = act_as(Principal(ann, "ann", False))
    try:
        runtime.wiki.write_page(Scope("default", "src").page("notes/a.md"), "ann's note")
    finally:
        restore(token)
    src = Scope("default", "src")

    def restrict(conn: sqlite3.Connection) -> None:
        identity_admin.set_visibility(conn, src, "restricted", now=now)
        identity_admin.grant(conn, src, "ben", "read", now=now)

    runtime.writer.call(restrict)
    return ann, ben


def _rule(runtime: Runtime, scope: Scope) -> dict[str, object]:
    return runtime.readers.read(lambda c: identity_admin.project_rule(c, scope))


def test_rename_and_move_carry_visibility_creator_and_grants(runtime: Runtime) -> None:
    _setup(runtime)
    expected = {"visibility": "restricted", "created_by": "ann"}
    grants = [("ben", "read")]
    rename_project(runtime, Scope("default", "src"), "renamed")
    rule = _rule(runtime, Scope("default", "renamed"))
    assert {k: rule[k] for k in expected} == expected
    assert [(g["user"], g["access"]) for g in rule["grants"]] == grants  # type: ignore[attr-defined]
    move_project(runtime, Scope("default", "renamed"), "team")
    rule = _rule(runtime, Scope("team", "renamed"))
    assert {k: rule[k] for k in expected} == expected
    assert [(g["user"], g["access"]) for g in rule["grants"]] == grants  # type: ignore[attr-defined]


def test_a_merge_keeps_restricted_content_restricted_and_its_creator_writing(
    runtime: Runtime,
) -> None:
    _setup(runtime)
    runtime.wiki.write_page(Scope("default", "dst").page("notes/b.md"), "root's note")
    merge_project(runtime, Scope("default", "src"), Scope("default", "dst"))
    rule = _rule(runtime, Scope("default", "dst"))
    assert rule["visibility"] == "restricted" and rule["created_by"] == "root"
    held = {(g["user"], g["access"]) for g in rule["grants"]}  # type: ignore[attr-defined]
    assert held == {("ann", "write"), ("ben", "read")}


def test_a_signed_in_credential_comes_after_the_environment_and_before_the_data_dir(
    data_dir: Path, tmp_path: Path
) -> None:
    from ai_memory import locate
    from ai_memory.cli.login import write_credential

    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    root_token = locate.token(data_dir, env)
    assert root_token and locate.credential(env) is None
    path = Path(locate.client_file(env))
    write_credential(path, "https://memory.example.com", "aim_abcdefghij_" + "x" * 43)
    assert path.stat().st_mode & 0o777 == 0o600
    assert locate.token(data_dir, env) == "aim_abcdefghij_" + "x" * 43
    assert locate.server_url(None, data_dir, env) == "https://memory.example.com"
    assert locate.server_url("http://127.0.0.1:1", data_dir, env) == "http://127.0.0.1:1"
    overridden = {**env, "AI_MEMORY_AUTH_TOKEN": "t", "AI_MEMORY_SERVER_URL": "http://h:2"}
    assert locate.token(data_dir, overridden) == "t"
    assert locate.server_url(None, data_dir, overridden) == "http://h:2"
    path.unlink()
    assert locate.token(data_dir, env) == root_token
