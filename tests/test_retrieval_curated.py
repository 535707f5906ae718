"""Curated knowledge beats session chatter, and session hits point at the turn that matched.

A real server over a real data dir: pages through the HTTP API, sessions
through ``POST /hook/batch``, questions through ``/api/v1/search``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess

CHATTER = [
    "run the refund tests again",
    "fix the lint in the queue worker",
    "the refund endpoint needs a decision on validation",
    "rounding helpers need type hints",
    "rerun CI for the refund branch",
]
FACT = "the flaky one was test_partial_capture_refund on the arm64 runner"
SESSIONS = 30


def hook_items() -> list[dict[str, Any]]:
    items = []
    for n in range(SESSIONS):
        sid = f"s{n:02d}"
        prompts = [CHATTER[(n + i) % len(CHATTER)] for i in range(4)]
        if n == 7:
            prompts.insert(2, FACT)
        events = [("SessionStart", {"source": "startup"})]
        events += [("UserPromptSubmit", {"prompt": p}) for p in prompts]
        events.append(("SessionEnd", {"reason": "other"}))
        for i, (event, body) in enumerate(events):
            params = {"agent": "claude-code", "project": "shop", "session_id": sid}
            params |= {"event": event, "ingest_key": f"{sid}-{i}"}
            payload = {"session_id": sid, "cwd": "/work/shop", "hook_event_name": event, **body}
            items.append({"params": params, "body": payload})
    return items


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root: Path = tmp_path_factory.mktemp("curated") / "data"
    initialise(Config.load(root, {}))
    server = ServerProcess(root).start()
    try:
        with server.client() as http:
            yield from _seeded(http)
    finally:
        server.stop()


def _seeded(http: httpx.Client) -> Iterator[httpx.Client]:
    page = {
        "body": "Refunds round half-even to the cent, per line item, before tax.",
        "title": "Refund rounding",
        "kind": "decision",
    }
    url = "/api/v1/projects/default/shop/pages/decisions/refund-rounding.md"
    http.put(url, json=page).raise_for_status()
    results = http.post("/hook/batch", json=hook_items()).json()["results"]
    assert {r["status"] for r in results} == {202}
    deadline = time.monotonic() + 30
    while sessions_written(http) < SESSIONS:
        assert time.monotonic() < deadline, "session pages were never written"
        time.sleep(0.05)
    yield http


def sessions_written(http: httpx.Client) -> int:
    listed = http.get("/api/v1/projects/default/shop/pages", params={"limit": 500}).json()
    return sum(p["path"].startswith("sessions/") for p in listed["pages"])


def search(http: httpx.Client, q: str, **extra: Any) -> dict[str, Any]:
    response = http.get("/api/v1/search", params={"q": q, "project": "shop", **extra})
    response.raise_for_status()
    result: dict[str, Any] = response.json()
    return result


def test_the_decision_beats_sessions_that_mention_its_words(client: httpx.Client) -> None:
    hits = search(client, "refund rounding decision")["hits"]
    assert hits[0]["path"] == "decisions/refund-rounding.md"
    assert all(h["path"].startswith("sessions/") for h in hits[1:])


def test_a_session_page_and_its_turns_vote_once(client: httpx.Client) -> None:
    hits = search(client, "refund tests", explain="true")["hits"]
    session = next(h for h in hits if h["path"].startswith("sessions/"))
    streams = session["explain"]["streams"]
    assert streams["session"]["contribution"] > 0
    for name in ("fts", "evidence"):
        if name in streams:
            assert streams[name]["via"] == "session"
            assert streams[name]["contribution"] == 0.0
    matched = [t["observation_id"] for t in session["turns"] if "follows" not in t]
    assert session["explain"]["turns"] == matched


def test_a_session_hit_carries_the_turn_that_holds_the_answer(client: httpx.Client) -> None:
    hits = search(client, "which refund test was flaky on arm64")["hits"]
    assert hits[0]["path"] == "sessions/s07.md"
    best = hits[0]["turns"][0]
    assert "test_partial_capture_refund" in best["snippet"]
    assert best["kind"] == "user-prompt" and best["session_id"] == "s07"
    assert hits[0]["snippet"] == best["snippet"]
    assert 2 <= len(hits[0]["turns"]) <= 4
    reply = hits[0]["turns"][1]  # the turn after the match comes along with it
    assert reply["follows"] == best["observation_id"]
    assert reply["observation_id"] > best["observation_id"]
