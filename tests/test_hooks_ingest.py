"""POST /hook and /hook/batch in process: durable 202, dedup, per-item answers, 429, sessions."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from tests.hooks_support import app_client

SCOPE = {"workspace": "default", "project": "shop"}


def params(**extra: str) -> dict[str, str]:
    return {**SCOPE, "agent": "claude-code", "session_id": "s1", **extra}


def rows(data_dir: Path, sql: str, *args: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(data_dir / "db" / "memory.sqlite")
    try:
        return conn.execute(sql, args).fetchall()
    finally:
        conn.close()


def test_hook_is_acknowledged_once_stored_and_retries_do_not_duplicate(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        body = {"hook_event_name": "UserPromptSubmit", "prompt": "add a cart page"}
        first = client.post("/hook", params=params(ingest_key="k-1"), json=body)
        again = client.post("/hook", params=params(ingest_key="k-1"), json=body)
        assert first.status_code == 202 and first.json()["duplicate"] is False
        assert again.status_code == 202 and again.json()["duplicate"] is True
    stored = rows(data_dir, "SELECT kind, body, session_id FROM observations")
    assert stored == [("user-prompt", "add a cart page", "s1")]
    fts = rows(data_dir, "SELECT rowid FROM observations_fts WHERE observations_fts MATCH 'cart'")
    assert len(fts) == 1
    assert rows(data_dir, "SELECT session_id, agent FROM sessions") == [("s1", "claude-code")]


def test_event_names_are_normalised_per_agent_and_unknown_ones_become_other(
    data_dir: Path,
) -> None:
    cases = [
        ("claude-code", "PostToolUse", "post-tool-use"),
        ("gemini", "BeforeAgent", "user-prompt"),
        ("gemini", "AfterTool", "post-tool-use"),
        ("cursor", "beforeSubmitPrompt", "user-prompt"),
        ("opencode", "session.compacted", "post-compaction"),
        ("codex", "session-start", "session-start"),
        ("generic", "user-prompt", "user-prompt"),
        ("claude-code", "SomethingNew", "other"),
        ("mystery-agent", "Whatever", "other"),
    ]
    with app_client(data_dir) as client:
        for index, (agent, event, _) in enumerate(cases):
            response = client.post(
                "/hook",
                params={**SCOPE, "agent": agent, "event": event, "ingest_key": f"n{index}"},
                json={"session_id": "abc", "prompt": "x", "tool_name": "Bash"},
            )
            assert response.status_code == 202, response.text
    kinds = rows(data_dir, "SELECT ingest_key, kind FROM observations ORDER BY id")
    assert [kind for _, kind in kinds] == [expected for _, _, expected in cases]


def test_bad_input_gets_a_clear_error_and_stores_nothing(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        bad = [
            (params(ingest_key="has space"), b"{}", "ingest_key"),
            (params(ingest_key="x" * 65), b"{}", "ingest_key"),
            ({**params(), "project": "../etc"}, b"{}", "project"),
            (params(), b"{not json", "JSON"),
            (params(), b"[1, 2]", "object"),
            ({"agent": "codex", "session_id": "s"}, b"{}", "project"),
            (params(session_id="a/b"), b"{}", "session_id"),
        ]
        for query, body, word in bad:
            response = client.post("/hook", params=query, content=body)
            assert response.status_code in (400, 422), (query, response.text)
            assert word in response.json()["message"], response.json()
    assert rows(data_dir, "SELECT count(*) FROM observations") == [(0,)]


def test_batch_answers_every_item_in_order(data_dir: Path) -> None:
    items: list[Any] = [
        {"params": params(event="UserPromptSubmit", ingest_key="b0"), "body": {"prompt": "one"}},
        {"params": params(ingest_key="bad key"), "body": {}},
        {"params": params(event="UserPromptSubmit", ingest_key="b2"), "body": {"prompt": "two"}},
        "not an item",
        {"params": params(event="UserPromptSubmit", ingest_key="b0"), "body": {"prompt": "one"}},
    ]
    with app_client(data_dir) as client:
        response = client.post("/hook/batch", json=items)
        too_many = client.post("/hook/batch", json=[items[0]] * 257)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["index"] for r in results] == [0, 1, 2, 3, 4]
    assert [r["status"] for r in results] == [202, 400, 202, 400, 202]
    assert results[1]["error"]["error"] == "invalid_input"
    assert too_many.status_code == 400
    assert rows(data_dir, "SELECT body FROM observations ORDER BY id") == [("one",), ("two",)]


def test_a_full_ingest_queue_answers_429_and_stores_nothing(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        client.app.state.hooks.limit = 0  # type: ignore[attr-defined]
        single = client.post("/hook", params=params(ingest_key="q1"), json={})
        batch = client.post("/hook/batch", json=[{"params": params(ingest_key="q2"), "body": {}}])
        assert single.status_code == 429
        assert single.json()["error"] == "saturated"
        assert batch.json()["results"][0]["status"] == 429
    assert rows(data_dir, "SELECT count(*) FROM observations") == [(0,)]


def test_a_batch_bigger_than_the_queue_is_stored_in_part_from_its_first_item(
    data_dir: Path,
) -> None:
    items = [
        {"params": params(event="UserPromptSubmit", ingest_key=f"p{i}"), "body": {"prompt": f"{i}"}}
        for i in range(20)
    ]
    with app_client(data_dir, hooks__queue_size="16") as client:
        first = client.post("/hook/batch", json=items).json()["results"]
        again = client.post("/hook/batch", json=items[16:]).json()["results"]  # resent
        metrics = client.get("/admin/metrics").text
    assert [r["status"] for r in first] == [202] * 16 + [429] * 4
    assert {r["error"]["error"] for r in first[16:]} == {"saturated"}
    assert [r["status"] for r in again] == [202] * 4
    # Counted item by item, as single events are: the operator sees the refusals.
    assert 'ai_memory_hook_admissions_total{result="accepted"} 20.0' in metrics
    assert 'ai_memory_hook_admissions_total{result="saturated"} 4.0' in metrics
    stored = rows(data_dir, "SELECT body FROM observations ORDER BY id")
    assert [body for (body,) in stored] == [f"{i}" for i in range(20)]


def session_events(session: str, prompts: list[str], tag: str = "") -> list[dict[str, Any]]:
    p = {**SCOPE, "agent": "generic", "session_id": session, "cwd": "/work/shop"}
    key = f"{session}{tag}"
    items = [{"params": {**p, "event": "session-start", "ingest_key": f"{key}-s"}, "body": {}}]
    for i, text in enumerate(prompts):
        items.append(
            {
                "params": {**p, "event": "user-prompt", "ingest_key": f"{key}-{i}"},
                "body": {"prompt": text},
            }
        )
    items.append({"params": {**p, "event": "session-end", "ingest_key": f"{key}-e"}, "body": {}})
    return items


def read_page(client: TestClient, path: str) -> dict[str, Any]:
    response = client.get(f"/api/v1/projects/default/shop/pages/{path}")
    assert response.status_code == 200, response.text
    page: dict[str, Any] = response.json()
    return page


def test_batch_session_gets_a_page_with_every_prompt_in_full(data_dir: Path) -> None:
    long_prompt = "Caroline: " + " ".join(f"word{i}" for i in range(1400))
    prompts = ["Melanie: I went hiking at Mount Rainier last week.", long_prompt, "Caroline: nice"]
    with app_client(data_dir) as client:
        response = client.post("/hook/batch", json=session_events("conv-1", prompts))
        assert {r["status"] for r in response.json()["results"]} == {202}
        flushed = client.post("/api/v1/sessions/flush", params={"timeout": 30}).json()
        assert flushed["pending"] == 0
        page = read_page(client, "sessions/conv-1.md")
    assert page["title"].startswith("Melanie: I went hiking")
    assert page["kind"] == "session" and page["tier"] == "episodic"
    for prompt in prompts:
        assert prompt in page["body"]
    assert page["frontmatter"]["session_id"] == "conv-1"


def test_more_work_after_the_end_rewrites_the_page_as_a_new_version(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        client.post("/hook/batch", json=session_events("s9", ["first task"]))
        client.post("/api/v1/sessions/flush")
        client.post("/hook/batch", json=session_events("s9", ["second task"], "b")[1:])
        client.post("/api/v1/sessions/flush")
        page = read_page(client, "sessions/s9.md")
        history = client.get("/api/v1/projects/default/shop/history/sessions/s9.md").json()
    assert "first task" in page["body"] and "second task" in page["body"]
    assert len(history["versions"]) == 2


def test_handoffs_open_list_accept_cancel(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        opened = client.post(
            "/api/v1/handoffs",
            json={**SCOPE, "summary": "finish the cart", "next_steps": ["tests"], "agent": "codex"},
        )
        assert opened.status_code == 201
        second = client.post("/api/v1/handoffs", json={**SCOPE, "summary": "to cancel"}).json()
        listed = client.get("/api/v1/handoffs", params=SCOPE).json()["handoffs"]
        assert {h["summary"] for h in listed} == {"finish the cart", "to cancel"}
        cancelled = client.post(f"/api/v1/handoffs/{second['id']}/cancel", params=SCOPE)
        assert cancelled.json()["status"] == "cancelled"
        again = client.post(f"/api/v1/handoffs/{second['id']}/cancel", params=SCOPE)
        assert again.status_code == 400
        accept = {**SCOPE, "agent": "gemini", "session_id": "g1"}
        claimed = client.post("/api/v1/handoffs/accept", json=accept).json()
        assert claimed["result"] == "claimed"
        assert claimed["handoff"]["content"]["next_steps"] == ["tests"]
        none = client.post("/api/v1/handoffs/accept", json=accept).json()
        assert none == {"result": "none_pending", "handoff": None}
        missing = client.post("/api/v1/handoffs/accept", json={**accept, "id": 999})
        assert missing.status_code == 404


def test_a_handoff_delivered_by_the_hook_is_reported_as_consumed(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        client.post("/api/v1/handoffs", json={**SCOPE, "summary": "keep going"})
        packet = client.get("/handoff", params={**SCOPE, "agent": "codex", "session_id": "c1"})
        assert packet.json()["handoff"]["summary"] == "keep going"
        again = client.get("/handoff", params={**SCOPE, "agent": "codex", "session_id": "c2"})
        assert again.json()["handoff"] is None
        accept = {**SCOPE, "agent": "codex", "session_id": "c1"}
        result = client.post("/api/v1/handoffs/accept", json=accept).json()
    assert result["result"] == "consumed_by_hook"
    assert result["handoff"]["summary"] == "keep going"


def test_session_observations_are_paged_newest_first(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        client.post("/hook/batch", json=session_events("old", [f"p{i}" for i in range(5)]))
        client.post("/hook/batch", json=session_events("mine", ["hello"])[:2])
        first = client.get("/api/v1/sessions/old/observations", params={**SCOPE, "limit": 3}).json()
        second = client.get(
            "/api/v1/sessions/old/observations",
            params={**SCOPE, "limit": 3, "before_id": first["next_before_id"]},
        ).json()
        newest_other = client.get(
            "/api/v1/sessions/observations", params={**SCOPE, "exclude_session": "mine"}
        ).json()
        unknown = client.get("/api/v1/sessions/nope/observations", params=SCOPE)
    bodies = [o["body"] for o in first["observations"] + second["observations"]]
    assert bodies[:4] == ["", "p4", "p3", "p2"]
    assert first["total"] == 7 and len(bodies) == 6
    assert newest_other["session"]["session_id"] == "old"
    assert unknown.status_code == 404


def test_finalize_and_idle_sessions_get_their_pages(data_dir: Path) -> None:
    with app_client(data_dir, hooks__idle_end_s="1", hooks__scheduler_interval_s="0.2") as client:
        p = {**SCOPE, "agent": "codex", "session_id": "cx1"}
        client.post("/hook", params={**p, "event": "UserPromptSubmit"}, json={"prompt": "do it"})
        done = client.post("/api/v1/sessions/finalize", json={**SCOPE, "agent": "codex"})
        assert done.json()["session_id"] == "cx1"
        assert "do it" in read_page(client, "sessions/cx1.md")["body"]
        q = {**SCOPE, "agent": "gemini", "session_id": "idle1"}
        client.post("/hook", params={**q, "event": "BeforeAgent"}, json={"prompt": "left open"})
        for _ in range(300):
            state = rows(data_dir, "SELECT ended_at FROM sessions WHERE session_id = 'idle1'")
            if state[0][0] is not None:
                break
            time.sleep(0.05)
        client.post("/api/v1/sessions/flush")
        assert "left open" in read_page(client, "sessions/idle1.md")["body"]
        nothing = client.post("/api/v1/sessions/finalize", json={**SCOPE, "agent": "codex"})
        assert nothing.status_code == 404
