"""Delivery of spooled events and start packets: body limits, lost answers, drain, housekeeping."""

from __future__ import annotations

import io
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import pytest

from ai_memory.hookclient import spool
from ai_memory.hookclient.deliver import LOG_CAP, log_error
from ai_memory.hookclient.main import Args, handle, run
from tests.conftest import ServerProcess, clean_env, free_port, run_cli
from tests.hooks_support import hook_env, make_checkout, run_hook

PROJECT = {"project": "acme-shop"}


def claude(session: str, cwd: Path, event: str, **fields: Any) -> dict[str, Any]:
    return {"session_id": session, "cwd": str(cwd), "hook_event_name": event, **fields}


def hook_in_process(payload: dict[str, Any], env: dict[str, str], event: str) -> dict[str, Any]:
    out = io.StringIO()
    stdin = io.BytesIO(json.dumps(payload).encode())
    assert run(["--agent", "claude-code", "--event", event], stdin=stdin, stdout=out, env=env) == 0
    answer: dict[str, Any] = json.loads(out.getvalue())
    return answer


def observations(server: ServerProcess, session: str) -> list[dict[str, Any]]:
    with server.client() as client:
        answer = client.get(
            f"/api/v1/sessions/{session}/observations", params={**PROJECT, "limit": 200}
        )
    assert answer.status_code == 200, answer.text
    found: list[dict[str, Any]] = answer.json()["observations"]
    return found


@pytest.fixture
def small_server(data_dir: Path) -> Any:
    """A real server whose request limit is 256 KiB, so a few big events exceed it."""
    proc = ServerProcess(data_dir, env=clean_env(AI_MEMORY_SERVER__MAX_REQUEST_BYTES="262144"))
    proc.start()
    try:
        yield proc
    finally:
        proc.stop()


def test_spooled_events_over_the_body_limit_are_all_delivered(
    small_server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    dead = hook_env(small_server.data_dir, f"http://127.0.0.1:{free_port()}")
    big = {"content": "line of output\n" * 40_000, "nested": [{"stdout": "y" * 300_000}]}
    for i in range(6):
        payload = claude(
            "big-1",
            checkout,
            "PostToolUse",
            tool_name="Bash",
            tool_input={"command": f"cat big-{i}.log"},
            tool_response=big,
        )
        hook_in_process(payload, dead, "PostToolUse")
    folder = small_server.data_dir / "spool"
    files = sorted(folder.glob("*.json"))
    assert len(files) == 6
    # Nested strings were cut on the client, with a marker, before spooling.
    assert all(f.stat().st_size < 200_000 for f in files)
    assert "[... cut" in files[0].read_text()
    assert sum(f.stat().st_size for f in files) > 262_144  # one batch would be refused

    # One event too big even alone: its fields are many, each under the field cap.
    wide = {f"field{n}": "z" * 60_000 for n in range(6)}
    live = hook_env(small_server.data_dir, small_server.url)
    hook_in_process(
        claude("big-1", checkout, "PostToolUse", tool_name="Read", tool_response=wide),
        live,
        "PostToolUse",
    )
    assert not list((folder / "rejected").glob("*.json"))  # kept and shrunk, not dropped

    drained = run_cli(
        "hook-drain", "--server", small_server.url, data_dir=small_server.data_dir, env=live
    )
    assert drained.returncode == 0, drained.stderr
    assert b"delivered 7" in drained.stdout
    assert list(folder.glob("*.json")) == []
    assert not list((folder / "rejected").glob("*.json"))
    stored = observations(small_server, "big-1")
    assert len(stored) == 7
    assert sum(o["body"].startswith("Bash: cat big-") for o in stored) == 6


def lost_answer_claim(server: ServerProcess, params: dict[str, str]) -> None:
    """GET /handoff whose answer the client never reads: the claim commits all the same."""
    query = "&".join(f"{k}={v}" for k, v in params.items())
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        request = (
            f"GET /handoff?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {server.token}\r\nConnection: close\r\n\r\n"
        )
        sock.sendall(request.encode())
    with server.client() as client:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            listed = client.get("/api/v1/handoffs", params={**PROJECT, "status": "claimed"})
            if listed.json()["handoffs"]:
                return
            time.sleep(0.05)
    raise AssertionError("the claim never committed")


def test_a_start_packet_that_never_arrived_comes_with_the_next_prompt(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    env = hook_env(server.data_dir, server.url)
    with server.client() as client:
        opened = client.post("/api/v1/handoffs", json={**PROJECT, "summary": "finish the cart"})
        assert opened.status_code == 201, opened.text
    # The session's packet request reached the server, which claimed the handoff, but
    # the answer was lost; and the hook run itself ran out of time before fetching it.
    lost_answer_claim(server, {**PROJECT, "agent": "claude-code", "session_id": "s-late"})
    start = claude("s-late", checkout, "SessionStart", source="startup")
    args = Args("claude-code")
    args.event = "SessionStart"
    expired = time.monotonic() - 10
    assert handle(args, server.data_dir, env, json.dumps(start).encode(), expired) == {}

    prompt = claude("s-late", checkout, "UserPromptSubmit", prompt="go on")
    code, out = run_hook("claude-code", "UserPromptSubmit", prompt, env, checkout)
    assert code == 0
    assert out["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "finish the cart" in out["hookSpecificOutput"]["additionalContext"]
    again = run_hook("claude-code", "UserPromptSubmit", {**prompt, "prompt": "more"}, env, checkout)
    assert again == (0, {})  # delivered once it arrived
    other = claude("s-other", checkout, "SessionStart", source="startup")
    code, out = run_hook("claude-code", "SessionStart", other, env, checkout)
    assert "finish the cart" not in json.dumps(out)  # still claimed by s-late only
    assert [o["body"] for o in observations(server, "s-late")].count("go on") == 1


def test_resumed_or_compacted_sessions_claim_nothing_new(server: ServerProcess) -> None:
    with server.client() as client:
        client.post("/api/v1/handoffs", json={**PROJECT, "summary": "pick up the refactor"})
        base = {**PROJECT, "agent": "codex"}
        for source, session in (("compact", "r-1"), ("resume", "r-2")):
            packet = client.get(
                "/handoff", params={**base, "session_id": session, "source": source}
            )
            assert packet.json()["handoff"] is None, source
        fresh = client.get("/handoff", params={**base, "session_id": "r-3", "source": "startup"})
        assert fresh.json()["handoff"]["summary"] == "pick up the refactor"
        repeat = client.get("/handoff", params={**base, "session_id": "r-3", "source": "startup"})
        assert repeat.json()["handoff"]["id"] == fresh.json()["handoff"]["id"]
        other = client.get("/handoff", params={**base, "session_id": "r-4"})
        assert other.json()["handoff"] is None


def test_an_automatic_handoff_expires_where_a_claim_would_match_it(server: ServerProcess) -> None:
    def session(name: str, cwd: str) -> list[dict[str, Any]]:
        params = {**PROJECT, "agent": "codex", "session_id": name, "cwd": cwd}
        return [
            {"params": {**params, "event": "user-prompt"}, "body": {"prompt": f"work in {cwd}"}},
            {"params": {**params, "event": "session-end"}, "body": {}},
        ]

    with server.client() as client:
        for name, cwd in (("a-1", "/src/shop"), ("a-2", "/src/shop/api")):
            client.post("/hook/batch", json=session(name, cwd))
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
        listed = client.get("/api/v1/handoffs", params={**PROJECT, "status": "all"}).json()
    status = {h["from_session"]: h["status"] for h in listed["handoffs"]}
    assert status == {"a-1": "expired", "a-2": "open"}


def test_drain_counts_refused_events_apart_and_fails_when_events_stay(
    server: ServerProcess, tmp_path: Path
) -> None:
    checkout = make_checkout(tmp_path / "shop")
    folder = server.data_dir / "spool"
    dead = hook_env(server.data_dir, f"http://127.0.0.1:{free_port()}")
    hook_in_process(claude("d-1", checkout, "UserPromptSubmit", prompt="kept"), dead, "x")
    bad = {"params": {"agent": "not an agent!", "project": "acme-shop"}, "body": {}}
    spool.write(folder, spool.new_ingest_key(), bad)
    env = hook_env(server.data_dir, server.url)
    drained = run_cli("hook-drain", "--server", server.url, data_dir=server.data_dir, env=env)
    assert drained.returncode == 0, drained.stderr
    assert b"delivered 1 event(s); 1 refused as invalid" in drained.stdout
    assert len(list((folder / "rejected").glob("*.json"))) == 1

    hook_in_process(claude("d-1", checkout, "UserPromptSubmit", prompt="stuck"), dead, "x")
    wrong = {**env, "AI_MEMORY_AUTH_TOKEN": "not-the-token"}
    stuck = run_cli("hook-drain", "--server", server.url, data_dir=server.data_dir, env=wrong)
    assert stuck.returncode == 1
    assert b"could not be delivered" in stuck.stderr
    assert len(list(folder.glob("*.json"))) == 1


def test_set_aside_events_expire_and_the_log_is_capped(tmp_path: Path) -> None:
    folder = tmp_path / "spool"
    for n in range(spool.REJECTED_KEEP_FILES + 5):
        key = spool.new_ingest_key()
        spool.write(folder, key, {"params": {}, "body": {"n": n}})
        spool.reject(folder, key)
    rejected = folder / spool.REJECTED
    assert len(list(rejected.iterdir())) == spool.REJECTED_KEEP_FILES
    week_ago = time.time() - spool.REJECTED_KEEP_S - 60
    for path in list(rejected.iterdir())[:10]:
        os.utime(path, (week_ago, week_ago))
    assert spool.prune_rejected(folder, time.time()) == 10
    assert len(list(rejected.iterdir())) == spool.REJECTED_KEEP_FILES - 10

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "hook.log").write_text("x" * (LOG_CAP + 1))
    log_error(tmp_path, "after the cap")
    assert (logs / "hook.log").read_text().endswith("after the cap\n")
    assert (logs / "hook.log").stat().st_size < 200
    assert (logs / "hook.log.1").stat().st_size == LOG_CAP + 1
