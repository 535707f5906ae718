"""The consolidation queue: automatic at session end, surviving SIGKILL, retrying, failing
visibly, and absent without a provider."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import ServerProcess, run_cli
from tests.consolidate_support import (
    PAGES,
    PROJECT,
    capture,
    db_rows,
    durable_answer,
    llm_server,
    wait_for,
)
from tests.fake_llm import FakeLlm, Reply, answer, slow
from tests.mcp_support import connect, failure

# Four server starts (one after a SIGKILL): long work, started first.
pytestmark = pytest.mark.slow

SID = "k-1"
DURABLE = ("concepts/sqlite-wal.md", "decisions/use-wal.md", "gotchas/database-is-locked.md")


def jobs(client: httpx.Client, state: str | None = None) -> list[dict[str, Any]]:
    params = {"state": state} if state else {}
    found: list[dict[str, Any]] = client.get("/api/v1/consolidate/jobs", params=params).json()[
        "jobs"
    ]
    return found


def test_a_job_killed_mid_call_is_taken_over_and_done_once(data_dir: Path) -> None:
    with FakeLlm() as fake:
        fake.push(slow(60, durable_answer(SID)))  # the first call hangs until the kill
        fake.responder = lambda request: answer(durable_answer(SID))
        server = llm_server(data_dir, fake, auto="true", poll_s="0.2").start()
        try:
            with server.client() as client:
                capture(client, SID)  # the session end queues the job
                wait_for(lambda: fake.requests, what="the provider call")
                assert [j["state"] for j in jobs(client)] == ["running"]
            server.kill()
            server.start()
            with server.client() as client:
                (job,) = wait_for(lambda: jobs(client, "done"), what="the job to finish")
                assert job["session_id"] == SID and job["attempts"] == 2
                assert len(jobs(client)) == 1
                for path in DURABLE:
                    assert client.get(f"{PAGES}/{path}").json()["version"] == 1, path
                assert client.get(f"{PAGES}/sessions/{SID}.md").json()["version"] == 2
        finally:
            server.stop()
        assert len(fake.requests) == 2
    rows = db_rows(data_dir, "SELECT path FROM page_evidence ORDER BY path")
    assert [r["path"] for r in rows] == sorted(
        [
            *DURABLE,
            "concepts/house-rules.md",
            "procedures/run-checkout-tests.md",
            f"sessions/{SID}.md",
        ]
    )


def test_a_malformed_answer_is_retried_then_failed_with_nothing_written(
    data_dir: Path,
) -> None:
    with FakeLlm() as fake:
        fake.responder = lambda request: Reply(content='{"title": "only a title", "pages": 3}')
        server = llm_server(
            data_dir, fake, max_attempts="2", retry_backoff_s="0.1", poll_s="0.2"
        ).start()
        try:
            with server.client() as client:
                capture(client, SID)
                answered = client.post("/api/v1/consolidate", json={**PROJECT})
                assert answered.status_code == 502, answered.text
                assert answered.json()["error"] == "llm_bad_answer"
                (job,) = wait_for(lambda: jobs(client, "failed"), what="the job to fail")
                assert job["session_id"] == SID and job["attempts"] == 2
                assert "LlmBadAnswer" in job["last_error"]
                status = client.get("/admin/status").json()["consolidation"]
                assert [f["session_id"] for f in status["failed"]] == [SID]
                assert status["jobs"]["failed"] == 1
                for path in DURABLE:
                    assert client.get(f"{PAGES}/{path}").status_code == 404
                assert client.get(f"{PAGES}/sessions/{SID}.md").json()["version"] == 1
                listed = run_cli("consolidate", "--jobs", "--server", server.url, data_dir=data_dir)
                assert listed.returncode == 0, listed.stderr
                assert f"session {SID} (tries 2): LlmBadAnswer" in listed.stdout.decode()
        finally:
            server.stop()
    assert not (data_dir / "wiki/default/shop/concepts").exists()
    assert db_rows(data_dir, "SELECT * FROM page_evidence") == []


def test_without_a_provider_nothing_is_queued_and_every_entry_says_so(data_dir: Path) -> None:
    server = ServerProcess(data_dir)
    server.env["AI_MEMORY_CONSOLIDATION__AUTO"] = "true"
    server.start()
    try:
        with server.client() as client:
            capture(client, SID)
            answered = client.post("/api/v1/consolidate", json={**PROJECT, "session_id": SID})
            assert answered.status_code == 503, answered.text
            assert answered.json()["error"] == "llm_unavailable"
            assert "no LLM provider configured" in answered.json()["message"]
            assert jobs(client) == []
            assert "consolidation" not in client.get("/admin/status").json()
        cli = run_cli(
            "consolidate", "-p", "shop", "--server", server.url, "--json", data_dir=data_dir
        )
        assert cli.returncode != 0 and b"no LLM provider configured" in cli.stderr
        result = _mcp_consolidate(server)
        assert result["error"] == "llm_unavailable", result
    finally:
        server.stop()
    assert db_rows(data_dir, "SELECT * FROM llm_jobs") == []


def _mcp_consolidate(server: ServerProcess) -> dict[str, Any]:
    import asyncio

    async def call() -> dict[str, Any]:
        async with connect(server) as client:
            found = await client.call_tool(
                "memory_consolidate", {"project": "shop", "session_id": SID}
            )
            return failure(found)

    return asyncio.run(call())
