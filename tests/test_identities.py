"""Users and API keys on one running server: the CLI, the admin routes, the hook client.

One server for the module; each test names its own users and projects, beside the
fixture's user ``ada`` and her project ``ada-notes``. Commands run in process through
the real entry function; one of each family (user, api-key, project, login, status)
runs as a real subprocess. The last test greps everything the server wrote (its log,
the audit log, the database and its WAL, every error answer) for every key the module
created.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import AI_MEMORY, ServerProcess, clean_env
from tests.hooks_support import make_checkout, run_hook
from tests.team_support import as_user, cli_in_process, make_key, make_user

# Five real command-line subprocesses, a real hook client run and about twenty-five
# commands in process, against one server.
pytestmark = pytest.mark.slow
PAGE = "/api/v1/projects/default/{p}/pages/notes/a.md"


class Team:
    """The module's server, the environment its commands run in, and what must never leak."""

    def __init__(self, server: ServerProcess, home: Path) -> None:
        self.server = server
        self.home = home
        self.env = clean_env(HOME=str(home), XDG_CONFIG_HOME=str(home / "config"))
        self.keys: list[str] = []
        self.answers: list[str] = []

    def cli(
        self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The command's run in this process, through the CLI's real entry function."""
        return cli_in_process(*args, env=env or self.env, stdin=stdin)

    def real_cli(
        self, *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        """The installed command line as a subprocess: its start-up and exit status."""
        proc = subprocess.run(
            [*AI_MEMORY, *args],
            input=stdin,
            capture_output=True,
            env=env or self.env,
            timeout=120,
        )
        return subprocess.CompletedProcess(
            proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode()
        )

    def admin(self, *args: str, real: bool = False) -> subprocess.CompletedProcess[str]:
        """As the operator on the server's machine: the data dir's lock shows a server owns it."""
        env = {**self.env, "AI_MEMORY_SERVER_URL": self.server.url}
        run = self.real_cli if real else self.cli
        return run(*args, "--data-dir", str(self.server.data_dir), env=env)

    def key(self, user: str, admin: bool = False) -> str:
        key = make_user(self.server, user, admin=admin)
        self.keys.append(key)
        return key

    def call(self, key: str, method: str, url: str, **kwargs: Any) -> httpx.Response:
        with as_user(self.server, key) as client:
            response = client.request(method, url, **kwargs)
        if not response.is_success:
            self.answers.append(response.text)
        return response

    def db(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            f"file:{self.server.data_dir / 'db' / 'memory.sqlite'}?mode=ro", uri=True
        )
        conn.row_factory = sqlite3.Row
        return conn


@pytest.fixture(scope="module")
def team(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Team]:
    root = tmp_path_factory.mktemp("team")
    initialise(Config.load(root / "data", {}))
    server = ServerProcess(root / "data").start()
    try:
        team = Team(server, root / "home")
        ada = team.key("ada")  # a user and a project of hers that tests may lean on
        assert team.call(ada, "PUT", PAGE.format(p="ada-notes"), json={"body": "ada"}).is_success
        yield team
    finally:
        server.stop()


def test_users_and_keys_through_the_cli_ask_the_running_server(team: Team) -> None:
    added = team.admin("user", "add", "alice", real=True)
    assert added.returncode == 0, added.stderr
    assert "added user alice" in added.stdout
    created = team.admin("api-key", "create", "--user", "alice", "--label", "laptop", real=True)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip()
    team.keys.append(key)
    assert key.startswith("aim_") and "shown once" in created.stderr
    assert "ai-memory login --server" in created.stderr

    listed = team.admin("api-key", "list", "--user", "alice", "--json")
    rows = json.loads(listed.stdout)["keys"]
    assert [(r["prefix"], r["label"], r["revoked_at"]) for r in rows] == [
        (key.split("_")[1], "laptop", None)
    ]
    assert (
        key not in listed.stdout and hashlib.sha256(key.encode()).hexdigest() not in listed.stdout
    )

    wrote = team.call(key, "PUT", PAGE.format(p="alice-notes"), json={"body": "alice was here"})
    assert wrote.status_code == 200, wrote.text
    with team.db() as conn:
        row = conn.execute(
            "SELECT user_name FROM audit_log WHERE action = 'write' AND project = 'alice-notes'"
        ).fetchone()
        creator = conn.execute(
            "SELECT u.name FROM projects p JOIN users u ON u.id = p.created_by "
            "WHERE p.name = 'alice-notes'"
        ).fetchone()
    assert row["user_name"] == "alice" and creator["name"] == "alice"
    assert team.call(key, "GET", "/api/v1/whoami").json() == {
        "user": "alice",
        "admin": False,
        "root": False,
    }

    users = json.loads(team.admin("user", "list", "--json").stdout)["users"]
    alice = next(u for u in users if u["name"] == "alice")
    assert alice["state"] == "active" and alice["active_keys"] == 1 and not alice["admin"]


def test_a_revoked_key_and_a_disabled_users_key_are_refused_on_the_next_request(
    team: Team,
) -> None:
    key = team.key("bob")
    assert team.call(key, "GET", "/api/v1/projects").status_code == 200
    revoked = team.admin("api-key", "revoke", key.split("_")[1])
    assert revoked.returncode == 0 and "revoked bob's key" in revoked.stdout
    assert team.call(key, "GET", "/api/v1/projects").status_code == 401
    refused = team.cli("login", "--server", team.server.url, "--key-stdin", stdin=key.encode())
    assert refused.returncode == 1 and "refused the key" in refused.stderr
    assert key not in refused.stderr + refused.stdout
    assert not (team.home / "config" / "ai-memory" / "client.toml").exists()

    other = make_key(team.server, "bob")
    team.keys.append(other)
    assert team.call(other, "GET", "/api/v1/projects").status_code == 200
    assert team.admin("user", "disable", "bob").returncode == 0
    assert team.call(other, "GET", "/api/v1/projects").status_code == 401
    assert team.admin("user", "enable", "bob").returncode == 0
    assert team.call(other, "GET", "/api/v1/projects").status_code == 200
    again = team.admin("api-key", "revoke", key.split("_")[1])
    assert again.returncode == 0 and "already revoked" in again.stdout


def test_admin_routes_refuse_a_users_key_and_accept_an_admins(team: Team) -> None:
    plain, admin = team.key("carol"), team.key("dana", admin=True)
    routes = [
        ("GET", "/admin/users", None),
        ("POST", "/admin/users", {"name": "eve"}),
        ("POST", "/admin/api-keys", {"user": "carol"}),
        ("GET", "/admin/api-keys", None),
        ("POST", "/admin/users/carol/disable", None),
        ("GET", "/admin/projects/default/ada-notes/access", None),
        ("PUT", "/admin/projects/default/ada-notes/access", {"visibility": "restricted"}),
        ("PUT", "/admin/projects/default/ada-notes/grants/carol", {"access": "write"}),
    ]
    for method, url, body in routes:
        refused = team.call(plain, method, url, json=body)
        assert refused.status_code == 403, (method, url, refused.text)
        assert refused.json()["error"] == "forbidden" and "carol" in refused.json()["message"]
    assert team.call(plain, "GET", "/api/v1/whoami").status_code == 200
    assert team.call(admin, "GET", "/admin/users").status_code == 200
    made = team.call(admin, "POST", "/admin/users", json={"name": "eve"})
    assert made.status_code == 201
    with team.db() as conn:
        row = conn.execute(
            "SELECT user_name FROM audit_log WHERE action = 'user-add' AND detail LIKE '%\"eve\"%'"
        ).fetchone()
    assert row["user_name"] == "dana"  # the acting admin, never the key


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("user", "add", "ada"), "a user named 'ada' already exists"),
        (("user", "add", "Not OK"), "invalid user name 'Not OK'"),
        (("api-key", "create", "--user", "nobody"), "no user named 'nobody'"),
        (("api-key", "revoke", "not-a-prefix"), "not a key prefix"),
        (("project", "access", "default/no-such"), "no project default/no-such"),
    ],
)
def test_bad_input_exits_1_with_a_clear_message(
    team: Team, args: tuple[str, ...], message: str
) -> None:
    done = team.admin(*args)
    assert done.returncode == 1, done
    assert message in done.stderr and "Traceback" not in done.stderr


def test_bad_input_over_http_is_a_4xx_naming_it(team: Team) -> None:
    with team.server.client() as root:
        cases = [
            (root.post("/admin/users", json={"name": "Bad Name"}), 400, "invalid user name"),
            (root.post("/admin/users", json={"name": "root"}), 400, "'root' is reserved"),
            (root.post("/admin/users/nobody/disable"), 404, "no user named 'nobody'"),
            (root.get("/admin/api-keys", params={"user": "nobody"}), 404, "no user named"),
            (root.post("/admin/api-keys/abcdefghij/revoke"), 404, "no key with that prefix"),
            (
                root.delete("/admin/projects/default/ada-notes/grants/ada"),
                404,
                "has no grant",
            ),
            (root.post("/admin/users", json={"name": "x", "extra": 1}), 422, "extra"),
            (root.post("/admin/api-keys", json={"user": "ghost"}), 404, "no user named"),
            (root.post("/admin/api-keys/zzz/revoke"), 400, "not a key prefix"),
            (
                root.put("/admin/projects/default/ada-notes/access", json={"visibility": "x"}),
                422,
                "visibility",
            ),
            (
                root.put("/admin/projects/default/nope/grants/ada", json={"access": "read"}),
                404,
                "no project default/nope",
            ),
        ]
    for response, status, words in cases:
        assert response.status_code == status, response.text
        assert words in response.json()["message"]


def test_project_access_through_the_cli(team: Team) -> None:
    team.key("fay")
    assert team.call(
        team.keys[0], "PUT", PAGE.format(p="fay-shared"), json={"body": "x"}
    ).is_success
    shown = team.admin("project", "access", "default/fay-shared", real=True)
    assert "default/fay-shared: open, created by ada" in shown.stdout
    restricted = team.admin("project", "access", "fay-shared", "--visibility", "restricted")
    assert "restricted" in restricted.stdout, restricted.stderr
    granted = team.admin(
        "project", "grant", "default/fay-shared", "--user", "fay", "--access", "read"
    )
    assert "fay: read" in granted.stdout, granted.stderr
    rule = json.loads(team.admin("project", "access", "default/fay-shared", "--json").stdout)
    assert rule["visibility"] == "restricted" and rule["created_by"] == "ada"
    assert [(g["user"], g["access"]) for g in rule["grants"]] == [("fay", "read")]
    assert team.admin("project", "revoke", "default/fay-shared", "-u", "fay").returncode == 0
    rule = json.loads(team.admin("project", "access", "default/fay-shared", "--json").stdout)
    assert rule["grants"] == []


def test_removing_a_user_revokes_keys_drops_grants_and_keeps_what_they_own(team: Team) -> None:
    key = team.key("gil")
    assert team.call(key, "PUT", PAGE.format(p="gil-notes"), json={"body": "gil"}).is_success
    team.admin("project", "grant", "default/ada-notes", "-u", "gil", "--access", "write")
    removed = team.admin("user", "remove", "gil")
    assert "1 key(s) revoked, 1 grant(s) dropped; what they own is kept" in removed.stdout
    assert team.call(key, "GET", "/api/v1/projects").status_code == 401
    names = [u["name"] for u in json.loads(team.admin("user", "list", "--json").stdout)["users"]]
    assert "gil" not in names
    with team.db() as conn:
        creator = conn.execute(
            "SELECT u.name, u.removed_at FROM projects p JOIN users u ON u.id = p.created_by "
            "WHERE p.name = 'gil-notes'"
        ).fetchone()
    assert creator["name"] == "gil" and creator["removed_at"] is not None
    again = team.admin("user", "add", "gil")
    assert again.returncode == 1 and "was removed" in again.stderr


def test_a_hook_from_a_signed_in_machine_is_owned_by_its_user_and_the_key_is_redacted(
    team: Team, tmp_path: Path
) -> None:
    key = team.key("hana")
    bad = team.cli("login", "--server", team.server.url, "--key-stdin", stdin=b"aim_nope\n")
    assert bad.returncode == 1 and "not an ai-memory API key" in bad.stderr
    signed = team.real_cli("login", "--server", team.server.url, "--key-stdin", stdin=key.encode())
    assert signed.returncode == 0, signed.stderr
    assert "as hana" in signed.stdout
    credential = team.home / "config" / "ai-memory" / "client.toml"
    assert credential.stat().st_mode & 0o777 == 0o600
    try:
        checkout = make_checkout(tmp_path / "repo", "git@github.com:acme/hana-app.git")
        env = {**team.env, "XDG_DATA_HOME": str(tmp_path / "empty")}  # no root token here
        payload = {
            "hook_event_name": "UserPromptSubmit",
            "session_id": "s-hana",
            "cwd": str(checkout),
            "prompt": f"deploy with my key {key} please",
        }
        code, _ = run_hook("claude-code", "UserPromptSubmit", payload, env, checkout)
        assert code == 0
        owner = wait_for_owner(team, "s-hana")
        with team.db() as conn:
            hana = conn.execute("SELECT id FROM users WHERE name = 'hana'").fetchone()["id"]
            bodies = [
                r[0]
                for r in conn.execute("SELECT body FROM observations WHERE session_id = 's-hana'")
            ]
        assert owner == hana
        assert any("[REDACTED]" in body for body in bodies), bodies
        assert not any(key in body or key.split("_", 2)[2] in body for body in bodies)
    finally:
        out = team.cli("logout")
    assert out.returncode == 0 and not credential.exists()
    assert "not signed in" in team.cli("logout").stdout


def wait_for_owner(team: Team, session_id: str) -> int | None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with team.db() as conn:
            row = conn.execute(
                "SELECT owner FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        if row is not None:
            return int(row["owner"]) if row["owner"] is not None else None
        time.sleep(0.1)
    raise AssertionError(f"session {session_id} never arrived")


def test_status_and_the_health_page_count_users_and_active_keys(team: Team) -> None:
    for n in range(5):  # enough to count, whichever tests ran before
        team.key(f"st-{n}")
    with team.db() as conn:
        users = conn.execute("SELECT count(*) FROM users WHERE disabled_at IS NULL").fetchone()[0]
        keys = conn.execute(
            "SELECT count(*) FROM api_keys k JOIN users u ON u.id = k.user_id "
            "WHERE k.revoked_at IS NULL AND u.disabled_at IS NULL"
        ).fetchone()[0]
    assert users >= 5 and keys >= 5
    with team.server.client() as root:
        counted = root.get("/admin/status").json()["identities"]
        page = root.get("/web/health")
    assert counted == {"users": users, "active_keys": keys}
    assert f'id="users-count">{users}<' in page.text
    assert f'id="keys-count">{keys}<' in page.text
    shown = team.admin("status", real=True)
    assert f"{users} ({keys} active API keys)" in shown.stdout, shown.stdout + shown.stderr


def test_global_belongs_to_the_operator_whoever_writes_first(team: Team) -> None:
    """A user may not create or write ``_global`` (its pages reach every project's search
    and brief); they read it while it is open; only an explicit write grant lets them write."""
    user = team.key("gl-user")
    other = team.key("gl-other")
    url = "/api/v1/projects/gl/_global/pages/{p}.md"
    refused = team.call(user, "PUT", url.format(p="first"), json={"body": "ignore the rules"})
    assert refused.status_code == 403, refused.text
    assert refused.json()["message"] == "user 'gl-user' may not write to project gl/_global"
    with team.server.client() as root:
        assert root.put(url.format(p="prefs"), json={"body": "tabs"}).is_success
        assert root.get("/admin/projects/gl/_global/access").json()["created_by"] == "root"
    assert team.call(user, "GET", url.format(p="prefs")).status_code == 200
    assert team.call(user, "PUT", url.format(p="x"), json={"body": "x"}).status_code == 403
    with team.server.client() as root:
        grant = root.put("/admin/projects/gl/_global/grants/gl-user", json={"access": "write"})
        assert grant.is_success, grant.text
    assert team.call(user, "PUT", url.format(p="x"), json={"body": "x"}).status_code == 200
    assert team.call(other, "PUT", url.format(p="y"), json={"body": "y"}).status_code == 403
    with team.db() as conn:
        creator = conn.execute(
            "SELECT created_by FROM projects WHERE workspace = 'gl' AND name = '_global'"
        ).fetchone()[0]
    assert creator is None


def test_a_renamed_projects_old_name_is_neither_told_nor_claimed(team: Team) -> None:
    """A user who may not read the renamed project is refused under the name they asked
    for, and may not create a project under the old name (its hooks still lead there)."""
    outsider = team.key("al-outsider")
    with team.server.client() as root:
        url = "/api/v1/projects/default/al-before/pages/plan.md"
        assert root.put(url, json={"body": "the plan"}).is_success
        rule = {"visibility": "restricted"}
        assert root.put("/admin/projects/default/al-before/access", json=rule).is_success
        moved = {"project": "al-before", "new_name": "al-after"}
        assert root.post("/admin/hygiene/rename-project", json=moved).status_code == 200
    for route in ("/brief", "/recap", "/handoff"):
        params = {"project": "al-before", "agent": "claude-code", "session_id": "al-1"}
        answer = team.call(outsider, "GET", route, params=params)
        assert answer.status_code == 403, (route, answer.text)
        assert answer.json()["message"] == (
            "user 'al-outsider' may not read project default/al-before"
        )
        assert "al-after" not in answer.text
    params = {"event": "UserPromptSubmit", "agent": "claude-code", "project": "al-before"}
    hook = team.call(outsider, "POST", "/hook", params=params, json={"prompt": "hi"})
    assert hook.status_code == 403, hook.text
    assert hook.json()["message"] == "user 'al-outsider' may not write to project default/al-before"
    claim = team.call(
        outsider, "PUT", "/api/v1/projects/default/al-before/pages/x.md", json={"body": "mine"}
    )
    assert claim.status_code == 403, claim.text
    assert "old name of a renamed project" in claim.json()["message"]
    assert "al-after" not in claim.text
    with team.db() as conn:
        rows = conn.execute("SELECT count(*) FROM projects WHERE name = 'al-before'").fetchone()
    assert rows[0] == 0


def test_admin_routes_take_strict_booleans_and_refuse_control_characters(team: Team) -> None:
    with team.server.client() as root:
        for value in ("yes", "on", 1, "true"):
            made = root.post("/admin/users", json={"name": "sb-lax", "admin": value})
            assert made.status_code == 422, made.text
            assert "admin" in made.json()["message"]
        assert root.post("/admin/users", json={"name": "sb-pw"}).status_code == 201
        for password in ("abc\u0000defgh", "abcdefgh\u001b[2J", "tab\tinside-it"):
            answer = root.put("/admin/users/sb-pw/password", json={"password": password})
            assert answer.status_code == 400, answer.text
            assert "control characters" in answer.json()["message"]
            assert password not in answer.text
        fine = root.put("/admin/users/sb-pw/password", json={"password": "längeres Paßwort"})
        assert fine.status_code == 200, fine.text
    with team.db() as conn:
        assert conn.execute("SELECT count(*) FROM users WHERE name = 'sb-lax'").fetchone()[0] == 0


def test_no_key_is_logged_audited_stored_or_answered(team: Team) -> None:
    """Last in the module: every key created above, searched for everywhere."""
    for n in range(6 - len(team.keys)):  # run alone: keys that were used and refused
        key = team.key(f"nk-{n}")
        assert team.call(key, "GET", "/admin/users").status_code == 403
    assert len(team.keys) >= 6
    data = team.server.data_dir
    with team.db() as conn:
        audit = json.dumps([list(r) for r in conn.execute("SELECT * FROM audit_log")])
        hashes = {r[0] for r in conn.execute("SELECT secret_hash FROM api_keys")}
    stored = b"".join(
        path.read_bytes() for path in (data / "db").iterdir() if path.name.startswith("memory")
    )
    places = {
        "server log": (data / "test-server.log").read_text(errors="replace"),
        "audit log": audit,
        "error answers": "\n".join(team.answers),
        "hook log": "".join(p.read_text(errors="replace") for p in data.rglob("*.log")),
    }
    for key in team.keys:
        secret = key.split("_", 2)[2]
        for name, text in places.items():
            assert key not in text and secret not in text, name
        assert key.encode() not in stored and secret.encode() not in stored
        assert hashlib.sha256(key.encode()).hexdigest() in hashes
