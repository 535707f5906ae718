"""Ownership through a real server: two users capture sessions in one open project.

Raw observations are their owner's; session pages are the project's. Handoffs are
private unless shared; ``any_owner`` is for admins. A session id one user started
takes no events from another; a project a key may not write takes none at all.
"""

from __future__ import annotations

import asyncio
import io
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import Tally, key_id, settle
from ai_memory.hookclient.drain import drain
from ai_memory.hookclient.main import run as run_hook_client
from ai_memory.hooks.ingest_access import SESSION_ROWS
from tests.conftest import ServerProcess, free_port
from tests.fake_llm import FakeLlm
from tests.fake_llm import error as llm_error
from tests.hooks_support import app_client, hook_env, make_checkout
from tests.llm_server import llm_server
from tests.mcp_support import connect, data, db_path, failure, module_server
from tests.team_support import as_user, grant, make_project, make_user, restrict

WS = "default"
OWN = "own-shared"
# A server with a provider whose learning loop does not tick on its own.
QUIET_LEARNING = {"AI_MEMORY_LEARNING__INTERVAL_H": "0"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def keys(srv: ServerProcess) -> dict[str, str]:
    return {
        "alice": make_user(srv, "alice"),
        "bob": make_user(srv, "bob"),
        "ada": make_user(srv, "ada", admin=True),
    }


@pytest.fixture(scope="module")
def captured(srv: ServerProcess, keys: dict[str, str]) -> dict[str, str]:
    """Alice and Bob each capture one finished session in the open project."""
    sessions = {"alice": "own-a", "bob": "own-b"}
    for user, session in sessions.items():
        with as_user(srv, keys[user]) as client:
            prompt = f"{user} tunes the zebrafish pipeline cache"
            assert post(client, OWN, session, "UserPromptSubmit", {"prompt": prompt}) == 202
            answer = {"last_assistant_message": f"{user} doubled the zebrafish cache size"}
            assert post(client, OWN, session, "Stop", answer) == 202
            assert post(client, OWN, session, "SessionEnd", {"reason": "exit"}) == 202
    with srv.client() as root:
        assert root.post("/api/v1/sessions/flush", params={"timeout": 60}).json()["pending"] == 0
    return sessions


def post(client: httpx.Client, project: str, session: str, event: str, body: dict[str, Any]) -> int:
    params = {"workspace": WS, "project": project, "agent": "claude-code", "session_id": session}
    response = client.post("/hook", params={**params, "event": event}, json=body)
    return response.status_code


def rows(srv: ServerProcess, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    with sqlite3.connect(db_path(srv)) as conn:
        return conn.execute(sql, args).fetchall()


def user_id(srv: ServerProcess, name: str) -> int:
    return int(rows(srv, "SELECT id FROM users WHERE name = ?", name)[0][0])


def call(srv: ServerProcess, key: str, name: str, **args: Any) -> Any:
    async def run() -> Any:
        async with connect(srv, token=key) as client:
            return await client.call_tool(name, args)

    return asyncio.run(run())


def observations(client: httpx.Client, session: str, project: str = OWN) -> httpx.Response:
    return client.get(
        f"/api/v1/sessions/{session}/observations", params={"workspace": WS, "project": project}
    )


def test_sessions_and_observations_belong_to_the_key_that_captured_them(
    srv: ServerProcess, captured: dict[str, str]
) -> None:
    alice, bob = user_id(srv, "alice"), user_id(srv, "bob")
    owners = rows(
        srv, "SELECT session_id, owner FROM sessions WHERE project = ? ORDER BY session_id", OWN
    )
    assert owners == [("own-a", alice), ("own-b", bob)]
    per_session = rows(
        srv,
        "SELECT session_id, group_concat(DISTINCT owner) FROM observations WHERE project = ? "
        "GROUP BY session_id ORDER BY session_id",
        OWN,
    )
    assert per_session == [("own-a", str(alice)), ("own-b", str(bob))]


def test_each_user_reads_their_own_raw_observations_and_not_the_others(
    srv: ServerProcess, keys: dict[str, str], captured: dict[str, str]
) -> None:
    with as_user(srv, keys["alice"]) as alice:
        mine = observations(alice, "own-a")
        assert mine.status_code == 200
        assert any("alice tunes" in o["body"] for o in mine.json()["observations"])
        theirs = observations(alice, "own-b")
        assert theirs.status_code == 403
        assert theirs.json()["error"] == "forbidden"
        assert "alice" in theirs.json()["message"] and "own-b" in theirs.json()["message"]
        assert "zebrafish" not in theirs.text
        listed = alice.get("/api/v1/sessions", params={"workspace": WS, "project": OWN}).json()
        assert [s["session_id"] for s in listed["sessions"]] == ["own-a"]
        newest = alice.get(
            "/api/v1/sessions/observations", params={"workspace": WS, "project": OWN}
        ).json()
        assert newest["session"]["session_id"] == "own-a"
    for key in (keys["ada"], srv.token):  # an admin and the operator read every session
        with as_user(srv, key) as admin:
            assert observations(admin, "own-b").status_code == 200
    refused = failure(
        call(srv, keys["bob"], "memory_read_session_observations", project=OWN, session_id="own-a")
    )
    assert refused["error"] == "forbidden" and "bob" in refused["message"]
    own = data(
        call(srv, keys["bob"], "memory_read_session_observations", project=OWN, session_id="own-b")
    )
    assert own["session"]["session_id"] == "own-b"
    fallback = data(call(srv, keys["bob"], "memory_read_session_observations", project=OWN))
    assert fallback["session"]["session_id"] == "own-b"  # the newest other session is bob's own


def test_both_find_both_session_pages_but_only_their_own_turns(
    srv: ServerProcess, keys: dict[str, str], captured: dict[str, str]
) -> None:
    with as_user(srv, keys["alice"]) as alice:
        found = alice.get("/api/v1/search", params={"q": "zebrafish cache", "project": OWN})
    assert found.status_code == 200, found.text
    hits = {h["path"]: h for h in found.json()["hits"]}
    assert {"sessions/own-a.md", "sessions/own-b.md"} <= set(hits)
    assert hits["sessions/own-a.md"]["turns"], hits["sessions/own-a.md"]
    assert not hits["sessions/own-b.md"].get("turns")
    bob_found = data(call(srv, keys["bob"], "memory_query", query="zebrafish cache", project=OWN))
    bob_hits = {h["path"]: h for h in bob_found["hits"]}
    assert {"sessions/own-a.md", "sessions/own-b.md"} <= set(bob_hits)
    assert not bob_hits["sessions/own-a.md"].get("turns")
    assert all(t["session_id"] == "own-b" for t in bob_hits["sessions/own-b.md"]["turns"])
    with as_user(srv, keys["ada"]) as admin:
        every = admin.get("/api/v1/search", params={"q": "zebrafish cache", "project": OWN}).json()
    assert all(h["turns"] for h in every["hits"] if h["path"].startswith("sessions/own-"))


def test_a_session_id_another_user_started_takes_nothing_from_you(
    srv: ServerProcess, keys: dict[str, str], captured: dict[str, str]
) -> None:
    before = rows(srv, "SELECT count(*) FROM observations WHERE session_id = 'own-a'")
    with as_user(srv, keys["bob"]) as bob:
        prompt = {"prompt": "bob writes into alice's session"}
        single = bob.post(
            "/hook",
            params={
                "workspace": WS,
                "project": OWN,
                "agent": "claude-code",
                "session_id": "own-a",
                "event": "UserPromptSubmit",
            },
            json=prompt,
        )
        item = {
            "params": {
                "workspace": WS,
                "project": OWN,
                "agent": "claude-code",
                "session_id": "own-a",
                "event": "UserPromptSubmit",
            },
            "body": prompt,
        }
        mine = {**item, "params": {**item["params"], "session_id": "own-b2"}}
        batch = bob.post("/hook/batch", json=[item, mine]).json()["results"]
    assert single.status_code == 403 and single.json()["error"] == "forbidden"
    assert "own-a" in single.json()["message"] and "bob" in single.json()["message"]
    assert [r["status"] for r in batch] == [403, 202]
    assert batch[0]["error"]["error"] == "forbidden"
    assert rows(srv, "SELECT count(*) FROM observations WHERE session_id = 'own-a'") == before
    owner = rows(srv, "SELECT owner FROM sessions WHERE session_id = 'own-b2'")
    assert owner == [(user_id(srv, "bob"),)]


def test_hook_ingest_needs_write_on_the_project(srv: ServerProcess, keys: dict[str, str]) -> None:
    make_project(srv, WS, "own-locked")
    restrict(srv, WS, "own-locked")
    prompt = {"prompt": "a prompt into a locked project"}

    def count() -> int:
        return int(
            rows(srv, "SELECT count(*) FROM observations WHERE project = 'own-locked'")[0][0]
        )

    with as_user(srv, keys["alice"]) as alice:
        refused = post_status(alice, "own-locked", prompt)
        assert refused.status_code == 403 and "alice" in refused.json()["message"]
        grant(srv, WS, "own-locked", "alice", "read")
        assert post_status(alice, "own-locked", prompt).status_code == 403
        assert count() == 0
        packet = alice.get(
            "/handoff", params={"workspace": WS, "project": "own-locked", "agent": "claude-code"}
        )
        assert packet.status_code == 200  # a reader gets the brief, claims nothing
        grant(srv, WS, "own-locked", "alice", "write")
        assert post_status(alice, "own-locked", prompt).status_code == 202
    assert count() == 1
    with as_user(srv, keys["bob"]) as bob:
        packet = bob.get(
            "/handoff", params={"workspace": WS, "project": "own-locked", "agent": "claude-code"}
        )
        assert packet.status_code == 403 and "bob" in packet.json()["message"]


def post_status(client: httpx.Client, project: str, body: dict[str, Any]) -> httpx.Response:
    params = {
        "workspace": WS,
        "project": project,
        "agent": "claude-code",
        "session_id": f"{project}-s",
        "event": "UserPromptSubmit",
    }
    return client.post("/hook", params=params, json=body)


def test_a_refused_event_leaves_the_spool_once_and_is_not_retried(tmp_path: Path) -> None:
    folder, data_dir = str(tmp_path / "spool"), str(tmp_path)
    spool.write(folder, "k1", {"params": {"project": "p"}, "body": {"prompt": "secret words"}})
    spool.write(folder, "k2", {"params": {"project": "p"}, "body": {}})
    tally = Tally()
    refusal = {"error": "forbidden", "message": "user 'bob' may not write to project default/p"}
    settle(folder, "k1", 403, refusal, data_dir, tally)
    origin = {"error": "forbidden_origin", "message": "bad origin"}
    settle(folder, "k2", 403, origin, data_dir, tally)  # the request's, not the event's
    assert not spool.exists(folder, "k1") and spool.exists(folder, "k2")
    assert tally.rejected == 1
    log = (tmp_path / "logs" / "hook.log").read_text()
    assert log.count("event k1 refused (403)") == 1 and "secret words" not in log


def test_handoffs_are_private_by_default_and_shared_on_request(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    project = "own-handoffs"
    make_project(srv, WS, project)
    private = data(
        call(
            srv,
            keys["alice"],
            "memory_handoff_begin",
            project=project,
            summary="alice's private notes",
        )
    )["handoff"]
    shared = data(
        call(
            srv,
            keys["alice"],
            "memory_handoff_begin",
            project=project,
            summary="alice's notes for everyone",
            shared=True,
        )
    )["handoff"]
    alice_ids = ids(call(srv, keys["alice"], "memory_handoff_list", project=project))
    bob_ids = ids(call(srv, keys["bob"], "memory_handoff_list", project=project))
    assert alice_ids == {private["id"], shared["id"]}
    assert bob_ids == {shared["id"]}
    hidden = failure(
        call(srv, keys["bob"], "memory_handoff_accept", project=project, handoff_id=private["id"])
    )
    assert hidden["error"] == "not_found"
    cancel = failure(
        call(srv, keys["bob"], "memory_handoff_cancel", project=project, handoff_id=private["id"])
    )
    assert cancel["error"] == "not_found"
    briefing = data(call(srv, keys["bob"], "memory_briefing", project=project))
    assert {h["id"] for h in briefing["open_handoffs"]} == {shared["id"]}
    claimed = data(call(srv, keys["bob"], "memory_handoff_accept", project=project))
    assert claimed["result"] == "claimed" and claimed["handoff"]["id"] == shared["id"]
    assert data(call(srv, keys["bob"], "memory_handoff_accept", project=project))["result"] == (
        "none_pending"
    )
    for tool in ("memory_handoff_list", "memory_handoff_accept"):
        refused = failure(call(srv, keys["bob"], tool, project=project, any_owner=True))
        assert refused["error"] == "forbidden" and "any_owner" in refused["message"]
    every = ids(
        call(srv, keys["ada"], "memory_handoff_list", project=project, status="any", any_owner=True)
    )
    assert every == {private["id"], shared["id"]}
    assert ids(call(srv, keys["ada"], "memory_handoff_list", project=project)) == set()
    cancelled = data(
        call(
            srv,
            keys["ada"],
            "memory_handoff_cancel",
            project=project,
            handoff_id=private["id"],
            any_owner=True,
        )
    )
    assert cancelled["handoff"]["status"] == "cancelled"


def ids(result: Any) -> set[int]:
    return {h["id"] for h in data(result)["handoffs"]}


def test_handoff_routes_scope_by_owner_and_keep_any_owner_for_admins(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    project = "own-handoff-api"
    where = {"workspace": WS, "project": project}
    with as_user(srv, keys["alice"]) as alice:
        private = alice.post("/api/v1/handoffs", json={**where, "summary": "mine"}).json()
        shared = alice.post(
            "/api/v1/handoffs", json={**where, "summary": "ours", "shared": True}
        ).json()
    with as_user(srv, keys["bob"]) as bob:
        listed = bob.get("/api/v1/handoffs", params=where).json()["handoffs"]
        assert [h["id"] for h in listed] == [shared["id"]]
        assert bob.get("/api/v1/handoffs", params={**where, "any_owner": "true"}).status_code == 403
        accept = bob.post("/api/v1/handoffs/accept", json={**where, "any_owner": True})
        assert accept.status_code == 403
        cancel = bob.post(f"/api/v1/handoffs/{private['id']}/cancel", params=where)
        assert cancel.status_code == 404
    with as_user(srv, keys["ada"]) as admin:
        every = admin.get("/api/v1/handoffs", params={**where, "any_owner": "true"}).json()
        assert {h["id"] for h in every["handoffs"]} == {private["id"], shared["id"]}


def test_the_session_end_handoff_is_its_owners_alone(
    srv: ServerProcess, keys: dict[str, str], captured: dict[str, str]
) -> None:
    alice = user_id(srv, "alice")
    auto = rows(
        srv,
        "SELECT owner, shared FROM handoffs WHERE project = ? AND origin = 'automatic' "
        "AND from_session = 'own-a'",
        OWN,
    )
    assert auto == [(alice, 0)]
    start = {"workspace": WS, "project": OWN, "agent": "claude-code", "source": "startup"}
    with as_user(srv, keys["bob"]) as bob:
        packet = bob.get("/handoff", params={**start, "session_id": "own-b-next"}).json()
        assert (packet.get("handoff") or {}).get("from_session") != "own-a"
        recap = bob.get("/recap", params={**start, "session_id": "own-a"}).json()
        assert "alice tunes" not in recap["context"]
    with as_user(srv, keys["alice"]) as client:
        packet = client.get("/handoff", params={**start, "session_id": "own-a-next"}).json()
        assert packet["handoff"]["from_session"] == "own-a"


def test_the_audit_log_names_the_user_of_each_mcp_write(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    project = "own-audit"
    written = data(
        call(
            srv,
            keys["alice"],
            "memory_write_page",
            project=project,
            path="notes/a.md",
            body="alice wrote this",
        )
    )
    assert written["page_id"]
    data(
        call(
            srv,
            keys["bob"],
            "memory_write_page",
            project=project,
            path="notes/b.md",
            body="bob wrote this",
        )
    )
    named = rows(
        srv,
        "SELECT path, user_name FROM audit_log WHERE project = ? AND path LIKE 'notes/%' "
        "ORDER BY path",
        project,
    )
    assert named == [("notes/a.md", "alice"), ("notes/b.md", "bob")]
    creator = rows(srv, "SELECT created_by FROM projects WHERE name = ?", project)
    assert creator == [(user_id(srv, "alice"),)]


def test_a_session_start_recovers_only_the_callers_own_interrupted_session(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    project = "own-recovery"
    with as_user(srv, keys["alice"]) as alice:
        prompt = {"prompt": "alice was halfway through the wombat migration"}
        assert post(alice, project, "own-open-a", "UserPromptSubmit", prompt) == 202
        start = {"workspace": WS, "project": project, "agent": "claude-code"}
        mine = alice.get("/handoff", params={**start, "session_id": "own-open-a2"}).json()
    with as_user(srv, keys["bob"]) as bob:
        theirs = bob.get("/handoff", params={**start, "session_id": "own-open-b"}).json()
    assert "wombat" in mine["context"]
    assert "wombat" not in theirs["context"] and "own-open-a" not in theirs["context"]


def test_a_session_id_is_its_first_owners_in_every_project(
    srv: ServerProcess, keys: dict[str, str]
) -> None:
    """Bob read alice's session id off the timeline: he cannot start it in another
    project, so alice's own events there are still taken."""
    with as_user(srv, keys["alice"]) as alice:
        assert post(alice, "own-squat-a", "own-squat", "UserPromptSubmit", {"prompt": "p"}) == 202
    make_project(srv, WS, "own-squat-b")
    with as_user(srv, keys["bob"]) as bob:
        squat = bob.post(
            "/hook",
            params={
                "workspace": WS,
                "project": "own-squat-b",
                "agent": "claude-code",
                "session_id": "own-squat",
                "event": "UserPromptSubmit",
            },
            json={"prompt": "squat"},
        )
    assert squat.status_code == 403 and squat.json()["error"] == "forbidden"
    assert "own-squat" in squat.json()["message"] and "own-squat-a" not in squat.json()["message"]
    with as_user(srv, keys["alice"]) as alice:
        moved = {"prompt": "alice moves to the second project"}
        assert post(alice, "own-squat-b", "own-squat", "UserPromptSubmit", moved) == 202
    owners = rows(
        srv, "SELECT project, owner FROM sessions WHERE session_id = 'own-squat' ORDER BY project"
    )
    assert owners == [
        ("own-squat-a", user_id(srv, "alice")),
        ("own-squat-b", user_id(srv, "alice")),
    ]
    with sqlite3.connect(db_path(srv)) as conn:
        plan = " ".join(r[-1] for r in conn.execute(f"EXPLAIN QUERY PLAN {SESSION_ROWS}", ("x",)))
    assert "sessions_by_id" in plan


def test_consolidation_and_review_pick_only_the_callers_own_sessions(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Without session_id, memory_consolidate and memory_auto_improve take the caller's
    latest completed session: never another user's (admins and the operator: anyone's)."""
    project = "own-llm"
    with FakeLlm() as fake, llm_server(tmp_path_factory, fake, **QUIET_LEARNING) as server:
        alice, bob = make_user(server, "alice"), make_user(server, "bob")
        with as_user(server, alice) as client:
            prompt = {"prompt": "alice tunes the narwhal index"}
            assert post(client, project, "own-llm-a", "UserPromptSubmit", prompt) == 202
            assert post(client, project, "own-llm-a", "SessionEnd", {"reason": "exit"}) == 202
        with server.client() as root:
            assert (
                root.post("/api/v1/sessions/flush", params={"timeout": 60}).json()["pending"] == 0
            )
        for tool in ("memory_consolidate", "memory_auto_improve"):
            mine = failure(call(server, bob, tool, project=project, dry_run=True))
            assert mine["error"] == "not_found", mine
            theirs = failure(
                call(server, bob, tool, project=project, session_id="own-llm-a", dry_run=True)
            )
            assert theirs["error"] == "forbidden" and "bob" in theirs["message"]
        with as_user(server, bob) as client:
            where = {"workspace": WS, "project": project, "dry_run": True}
            assert client.post("/api/v1/consolidate", json=where).status_code == 404
            assert client.post("/api/v1/auto-improve", json=where).status_code == 404
            named = {**where, "session_id": "own-llm-a"}
            assert client.post("/api/v1/consolidate", json=named).status_code == 403
            assert client.post("/api/v1/auto-improve", json=named).status_code == 403
        assert fake.bodies() == []  # nothing of alice's session went to the provider
        fake.push(llm_error(400))
        call(server, alice, "memory_consolidate", project=project, dry_run=True)
        assert "narwhal" in json.dumps(fake.bodies())  # her own: picked and sent


def spool_hook_event(data_dir: Path, checkout: Path, session: str, key: str | None) -> None:
    """A real hook run against a dead server, with ``key`` (None: the root token file)."""
    extra = {"AI_MEMORY_AUTH_TOKEN": key} if key else {}
    env = hook_env(data_dir, f"http://127.0.0.1:{free_port()}", **extra)
    payload = {"session_id": session, "cwd": str(checkout), "prompt": f"{session} prompt"}
    argv = ["--agent", "claude-code", "--event", "UserPromptSubmit"]
    stdin = io.BytesIO(json.dumps(payload).encode())
    assert run_hook_client(argv, stdin=stdin, stdout=io.StringIO(), env=env) == 0


def test_the_servers_spool_drain_stores_each_event_as_the_key_that_captured_it(
    data_dir: Path, tmp_path: Path
) -> None:
    """The hook client notes the capturing key's public id (never its secret) in the
    spool; the server's own drain stores the event as that key's user, the root token's
    as the operator, and a revoked key's not at all (it stays spooled)."""
    checkout = make_checkout(tmp_path / "shop")
    with app_client(data_dir) as root:
        made = {}
        for name in ("alice", "bob"):
            assert root.post("/admin/users", json={"name": name}).status_code == 201
            made[name] = root.post("/admin/api-keys", json={"user": name}).json()["key"]
        revoke = root.post(f"/admin/api-keys/{made['bob'].split('_')[1]}/revoke")
        assert revoke.is_success, revoke.text
    spool_hook_event(data_dir, checkout, "drain-alice", made["alice"])
    spool_hook_event(data_dir, checkout, "drain-bob", made["bob"])
    spool_hook_event(data_dir, checkout, "drain-root", None)
    folder = data_dir / "spool"
    spooled = [spool.read(folder, k) for k in spool.pending(folder)]
    assert sorted(str(e.get("key_id")) for e in spooled if e) == sorted(
        [made["alice"].split("_")[1], made["bob"].split("_")[1], "None"]
    )
    assert not any(made["alice"] in json.dumps(e) for e in spooled)
    with app_client(data_dir):
        deadline = time.monotonic() + 60
        while len(spool.pending(folder)) > 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    with sqlite3.connect(data_dir / "db" / "memory.sqlite") as conn:
        owners = dict(conn.execute("SELECT session_id, owner FROM sessions").fetchall())
        alice = conn.execute("SELECT id FROM users WHERE name = 'alice'").fetchone()[0]
    assert owners == {"drain-alice": alice, "drain-root": None}
    assert len(spool.pending(folder)) == 1  # bob's, whose key was revoked: never the operator's


def test_the_hook_drain_delivers_only_what_its_own_key_captured(
    srv: ServerProcess, keys: dict[str, str], tmp_path: Path
) -> None:
    """`ai-memory hook-drain` after a change of credential (another key, or signed out
    and back on the root token) leaves the other credential's events spooled."""
    folder = tmp_path / "spool"
    for session, key in (("hd-alice", keys["alice"]), ("hd-bob", keys["bob"]), ("hd-root", None)):
        params = {"workspace": WS, "project": "own-drain", "agent": "claude-code"}
        params |= {"session_id": session, "event": "UserPromptSubmit"}
        entry: dict[str, Any] = {"params": params, "body": {"prompt": "spooled"}}
        if key is not None:
            entry["key_id"] = key_id(key)
        spool.write(str(folder), spool.new_ingest_key(), entry)
    report = drain(tmp_path, srv.url, keys["alice"], timeout_s=30)
    assert (report.delivered, report.remaining, report.others) == (1, 2, 2)
    owners = rows(srv, "SELECT session_id, owner FROM sessions WHERE project = 'own-drain'")
    assert owners == [("hd-alice", user_id(srv, "alice"))]


def test_the_timeline_shows_another_users_session_id_only_once_its_page_exists(
    srv: ServerProcess, keys: dict[str, str], captured: dict[str, str]
) -> None:
    """Bob sees alice's running session as 'another user's session' (no id, no link);
    her ended one links to its session page, not to her raw events."""
    with as_user(srv, keys["alice"]) as alice:
        prompt = {"prompt": "alice is mid-way"}
        assert post(alice, OWN, "own-running-a", "UserPromptSubmit", prompt) == 202
        mine = alice.get(f"/web/{WS}/{OWN}/sessions").text
    assert "own-running-a" in mine and "/session/own-running-a" in mine
    with as_user(srv, keys["bob"]) as bob:
        for url in (f"/web/{WS}/{OWN}/sessions", "/web/sessions", f"/web/{WS}/{OWN}"):
            page = bob.get(url)
            assert page.status_code == 200, page.text
            assert "own-running-a" not in page.text and "another user&#39;s session" in page.text
            assert "/session/own-a" not in page.text and "sessions/own-a.md" in page.text
            assert "/session/own-b" in page.text  # his own: the raw view


def test_the_briefing_lists_only_the_callers_own_recent_sessions(
    srv: ServerProcess, keys: dict[str, str], captured: dict[str, str]
) -> None:
    bob = data(call(srv, keys["bob"], "memory_briefing", project=OWN))["recent_sessions"]
    assert "own-b" in {s["session_id"] for s in bob}
    owned = rows(srv, "SELECT session_id FROM sessions WHERE owner = ?", user_id(srv, "bob"))
    assert {s["session_id"] for s in bob} <= {r[0] for r in owned}
    admin = data(call(srv, keys["ada"], "memory_briefing", project=OWN))["recent_sessions"]
    assert {"own-a", "own-b"} <= {s["session_id"] for s in admin}
