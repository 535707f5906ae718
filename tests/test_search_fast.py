"""The search GET's folded path: the engine's own answer, and every check of the stack."""

from __future__ import annotations

import json
import re
from pathlib import Path

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval.models import SearchRequest
from ai_memory.web.search_fast import SearchFast
from tests.conftest import ServerProcess, clean_env
from tests.hooks_support import app_client
from tests.team_support import as_user, make_user, restrict, revoke_key
from tests.test_page_fast import layer

PAGES = "/api/v1/projects/default/fast/pages"
SEARCH = "/api/v1/search"
FAST_X = {"q": "x", "project": "fast"}


def api_queries(metrics: str) -> float:
    found = re.search(r'ai_memory_query_seconds_count\{surface="api"\} ([0-9.e+]+)', metrics)
    return float(found.group(1)) if found else 0.0


def test_a_search_takes_the_folded_path_and_answers_what_the_engine_finds(
    data_dir: Path,
) -> None:
    with app_client(data_dir) as client:
        client.put(f"{PAGES}/decisions/refunds.md", json={"body": "# Refunds\n\nround half up"})
        client.put(f"{PAGES}/notes/other.md", json={"body": "# Other\n\nnothing to see"})
        before = api_queries(client.get("/admin/metrics").text)
        answered = client.get(SEARCH, params={"q": "refunds rounding", "project": "fast"})
        twice = client.get(SEARCH, params=[("q", "nothing"), ("q", "refunds"), ("project", "fast")])
        after = api_queries(client.get("/admin/metrics").text)
        runtime = client.app.state.runtime  # type: ignore[attr-defined]
        request = SearchRequest.parse({"query": "refunds rounding", "project": "fast"})
        engine = json.loads(runtime.retrieval.search_sync(request, defer=True).to_json())
        folded = layer(client.app, SearchFast)
    assert folded._found() is not None  # the stack is the expected one: no silent fall-back
    assert answered.status_code == 200, answered.text
    assert answered.headers["content-type"] == "application/json"
    body = answered.json()
    assert [hit["path"] for hit in body["hits"]] == ["decisions/refunds.md"]
    body.pop("timings"), engine.pop("timings")
    assert body == engine
    # A field given twice counts with its last value, as the route read it.
    assert [hit["path"] for hit in twice.json()["hits"]] == ["decisions/refunds.md"]
    assert after - before == 2  # each search counted once, as the metrics middleware counts


def test_host_auth_and_bad_queries_answer_as_the_stack_and_route_do(
    data_dir: Path,
) -> None:
    with app_client(data_dir) as client:
        wrong_host = client.get(SEARCH, params=FAST_X, headers={"host": "evil.example"})
        missing = client.get(SEARCH, params=FAST_X, headers={"authorization": ""})
        bad = client.get(SEARCH, params=FAST_X, headers={"authorization": "Bearer nope"})
        no_query = client.get(SEARCH, params={"project": "fast"})
        no_query_no_token = client.get(SEARCH, headers={"authorization": ""})
        limit = client.get(SEARCH, params={**FAST_X, "limit": "many"})
        kind = client.get(SEARCH, params={**FAST_X, "kind": "novel"})
        name = client.get(SEARCH, params={"q": "x", "project": "../up"})
    assert wrong_host.status_code == 421 and wrong_host.json()["error"] == "wrong_host"
    assert missing.status_code == 401 and missing.json()["message"] == "missing bearer token"
    assert bad.status_code == 401 and bad.headers["www-authenticate"] == 'Bearer realm="ai-memory"'
    assert no_query.status_code == 422 and "query.q: Field required" in no_query.text
    assert no_query_no_token.status_code == 401  # refused before the query is looked at
    assert limit.status_code == 400 and "limit" in limit.json()["message"], limit.text
    assert kind.status_code == 400 and "kind must be one of" in kind.json()["message"]
    assert name.status_code == 400, name.text


def test_a_key_searches_only_what_it_may_read_and_not_once_revoked(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    server = ServerProcess(root, env=clean_env()).start()
    try:
        with server.client() as admin:
            admin.put(f"{PAGES}/secret.md", json={"body": "# Secret\n\nlaunch codes"})
        restrict(server, "default", "fast")
        key = make_user(server, "ada")
        with as_user(server, key) as ada:
            named = ada.get(SEARCH, params={"q": "launch codes", "project": "fast"})
            revoke_key(server, key)
            after = ada.get(SEARCH, params={"q": "launch codes", "project": "fast"})
    finally:
        server.stop()
    assert named.status_code == 403 and named.json()["error"] == "forbidden", named.text
    assert after.status_code == 401, after.text
