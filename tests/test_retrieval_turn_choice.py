"""A session hit shows the turns that hold the query's rarer words, not its shortest matches.

A real server over a real data dir: a conversation sent as hook events,
questions through ``/api/v1/search``.
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
from ai_memory.retrieval.turn_choice import local_weights
from tests.conftest import ServerProcess

# Every turn here names a speaker; the one that answers "which cities has Jon
# visited" is long. Elsewhere in the index "visited" is common and "Jon" is rare,
# so BM25 over all turns prefers the short turns that only say "Jon".
TRIP = [
    "Gina: Thanks, Jon!",
    "Jon: Thanks, Gina! Great to hear from you.",
    "Gina: How was your week, Jon?",
    "Jon: Busy with the studio, but I took a short trip last week and visited Rome and "
    "then Paris, walking the old streets every evening to clear my mind a little.",
    "Gina: Sounds lovely, Jon.",
    "Jon: Bye, Gina!",
    "Gina: Bye, Jon!",
]
OTHER = [
    "Gina: Jon, my store is doing well.",
    "Jon: Good news, Gina!",
    "Gina: Thanks, Jon.",
]


ELSEWHERE = [f"We visited museum number {n} and then visited the park." for n in range(40)]


def hook_items() -> list[dict[str, Any]]:
    items = []
    sessions = [("chat", "trip", TRIP), ("chat", "store", OTHER), ("tours", "tours", ELSEWHERE)]
    for project, sid, prompts in sessions:
        events = [("SessionStart", {"source": "startup"})]
        events += [("UserPromptSubmit", {"prompt": p}) for p in prompts]
        events.append(("SessionEnd", {"reason": "other"}))
        for i, (event, body) in enumerate(events):
            params = {"agent": "claude-code", "project": project, "session_id": sid}
            params |= {"event": event, "ingest_key": f"{sid}-{i}"}
            cwd = f"/work/{project}"
            payload = {"session_id": sid, "cwd": cwd, "hook_event_name": event, **body}
            items.append({"params": params, "body": payload})
    return items


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    root: Path = tmp_path_factory.mktemp("turn-choice") / "data"
    initialise(Config.load(root, {}))
    server = ServerProcess(root).start()
    try:
        with server.client() as http:
            results = http.post("/hook/batch", json=hook_items()).json()["results"]
            assert {r["status"] for r in results} == {202}
            deadline = time.monotonic() + 30
            while written(http) < 2:
                assert time.monotonic() < deadline, "session pages were never written"
                time.sleep(0.05)
            yield http
    finally:
        server.stop()


def written(http: httpx.Client) -> int:
    listed = http.get("/api/v1/projects/default/chat/pages", params={"limit": 50}).json()
    return sum(p["path"].startswith("sessions/") for p in listed["pages"])


def test_the_turn_with_the_rare_word_is_shown_first(client: httpx.Client) -> None:
    params = {"q": "which cities has Jon visited", "project": "chat", "explain": "true"}
    hits = client.get("/api/v1/search", params=params).json()["hits"]
    trip = next(h for h in hits if h["path"] == "sessions/trip.md")
    assert "visited Rome" in trip["turns"][0]["snippet"]
    assert trip["snippet"] == trip["turns"][0]["snippet"]
    matched = [t["observation_id"] for t in trip["turns"] if "follows" not in t]
    assert trip["explain"]["turns"] == matched  # explain lists the turns shown


def test_a_word_in_every_turn_weighs_almost_nothing() -> None:
    texts = {1: "jon: thanks!", 2: "jon: bye!", 3: "jon: i visited rome", 4: "gina: hi jon"}
    weight = local_weights(texts, ["jon", "visited"])
    assert weight[3] == max(weight.values())
    assert weight[1] == weight[2] == weight[4] < 0.2 * weight[3]


def test_query_words_match_at_word_starts_only() -> None:
    weight = local_weights({1: "a rerun of the tests", 2: "run it again"}, ["run"])
    assert weight[2] > 0 and weight[1] == 0
