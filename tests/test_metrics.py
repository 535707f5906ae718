"""``/admin/metrics`` and ``/admin/status`` on a real server, read by Prometheus's own parser."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from ai_memory.metrics.registry import (
    ADMISSION_RESULTS,
    DELIVERY_OUTCOMES,
    DELIVERY_ROUTES,
    QUERY_SURFACES,
    TOOL_ACCESS,
)
from tests.conftest import ServerProcess
from tests.mcp_support import connect, data

CLOSED = {
    "result": set(ADMISSION_RESULTS),
    "route": set(DELIVERY_ROUTES),
    "outcome": set(DELIVERY_OUTCOMES),
    "access": set(TOOL_ACCESS),
    "surface": set(QUERY_SURFACES),
    "le": None,  # histogram bucket bounds: numbers we chose
}
USER_TEXT = ("needle-query-7f3", "secret-project-9c1", "zz-agent-b2", "private/path-4e.md")


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server that saw hook events, a duplicate, a refusal, searches and MCP calls."""
    from ai_memory.config import Config
    from ai_memory.maintenance.init import initialise

    root = tmp_path_factory.mktemp("metrics") / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root).start()
    try:
        with proc.client() as client:
            exercise(proc, client)
        yield proc
    finally:
        proc.stop()


def exercise(proc: ServerProcess, client: httpx.Client) -> None:
    query, project, agent, path = USER_TEXT
    page = {"body": f"{query} lives here"}
    client.put(f"/api/v1/projects/default/{project}/pages/{path}", json=page).raise_for_status()
    params = {"project": project, "agent": agent, "session_id": "s-1", "ingest_key": "k-1"}
    event = {"hook_event_name": "UserPromptSubmit", "prompt": query}
    assert client.post("/hook", params=params, json=event).status_code == 202
    assert client.post("/hook", params=params, json=event).status_code == 202  # duplicate
    bad = client.post("/hook", params={**params, "agent": "no spaces"}, json=event)
    assert bad.status_code == 400
    client.get("/api/v1/search", params={"q": query, "project": project}).raise_for_status()

    async def mcp() -> None:
        async with connect(proc) as session:
            data(await session.call_tool("memory_query", {"query": query, "project": project}))
            data(await session.call_tool("memory_recent", {"project": project}))
            data(
                await session.call_tool(
                    "memory_write_page",
                    {"project": project, "path": "notes/n.md", "body": query},
                )
            )

    asyncio.run(mcp())


def families(proc: ServerProcess) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    with proc.client() as client:
        answer = client.get("/admin/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain")
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(answer.text):
        for sample in family.samples:
            key = tuple(sorted(sample.labels.items()))
            found.setdefault(sample.name, {})[key] = sample.value
    return found


def test_metrics_count_what_the_server_answered(busy: ServerProcess) -> None:
    found = families(busy)
    admissions = found["ai_memory_hook_admissions_total"]
    assert admissions[(("result", "accepted"),)] == 1
    assert admissions[(("result", "duplicate"),)] == 1
    assert admissions[(("result", "rejected"),)] == 1
    deliveries = found["ai_memory_deliveries_total"]
    assert deliveries[(("outcome", "ok"), ("route", "hook"))] == 2
    assert deliveries[(("outcome", "refused"), ("route", "hook"))] == 1
    tools = found["ai_memory_mcp_tool_calls_total"]
    assert tools[(("access", "read"),)] == 2 and tools[(("access", "write"),)] == 1
    assert found["ai_memory_hook_answer_seconds_count"][()] == 3
    queries = found["ai_memory_query_seconds_count"]
    assert queries[(("surface", "api"),)] == 1 and queries[(("surface", "mcp"),)] == 1
    assert found["ai_memory_writer_queue_depth"][()] >= 0
    waits = found["ai_memory_writer_queue_wait_seconds_bucket"]
    assert waits[(("le", "+Inf"),)] == found["ai_memory_writer_queue_wait_seconds_count"][()]
    assert found["ai_memory_writer_queue_wait_seconds_count"][()] >= 4  # the writes above
    assert found["ai_memory_writer_queue_wait_seconds_sum"][()] > 0
    assert 0 < found["ai_memory_writer_longest_recent_wait_seconds"][()] < 60
    assert found["ai_memory_last_persisted_timestamp_seconds"][()] > 1.7e9


def test_no_label_value_comes_from_what_clients_sent(busy: ServerProcess) -> None:
    with busy.client() as client:
        text = client.get("/admin/metrics").text
    for value in USER_TEXT:
        assert value not in text
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            for name, value in sample.labels.items():
                assert name in CLOSED, (sample.name, name)
                allowed = CLOSED[name]
                if allowed is not None:
                    assert value in allowed, (sample.name, name, value)


def test_admin_routes_need_the_bearer_token_not_the_ui_cookie(busy: ServerProcess) -> None:
    for path in ("/admin/status", "/admin/metrics"):
        assert httpx.get(busy.url + path, timeout=10).status_code == 401
    with httpx.Client(base_url=busy.url, timeout=10) as browser:
        assert browser.get("/web/login", params={"token": busy.token}).status_code == 303
        assert browser.get("/admin/metrics").status_code == 401


def test_status_and_metrics_answer_on_a_data_dir_never_written(server: ServerProcess) -> None:
    with server.client() as client:
        status = client.get("/admin/status")
        metrics = client.get("/admin/metrics")
    assert status.status_code == 200 and status.json()["last"]["write"] is None
    assert metrics.status_code == 200 and "ai_memory_writer_queue_depth" in metrics.text


def test_status_reports_counts_queue_spool_and_health(busy: ServerProcess) -> None:
    with busy.client() as client:
        status = client.get("/admin/status").json()
    assert status["data_dir"] == str(busy.data_dir.resolve())
    projects = {p["project"]: p for p in status["projects"]}
    assert projects[USER_TEXT[1]]["pages"] == 2 and projects[USER_TEXT[1]]["sessions"] == 1
    assert status["sessions_open"] == 1
    writer = status["writer"]
    assert writer["queue_depth"] >= 0 and writer["commands"] > 0
    assert writer["longest_recent_wait_ms"] > 0 and writer["recent_window_s"] == 300
    assert status["hooks"]["slowest_recent_answer_ms"] > 0
    assert status["spool"] == {"depth": 0, "oldest_age_s": 0.0}
    assert status["last"]["write"]
    assert status["sizes"]["index_bytes"] > 0 and status["versions"] >= status["pages"] > 0
    assert status["embedder"] == {"configured": False}
    assert status["warnings"] == []
    assert "tasks" in status["maintenance"]  # the scheduler's own section
