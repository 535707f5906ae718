"""Hostile payloads from the hardening report: answered, stored redacted, and /healthz never waits.

Each request that once held the event loop for seconds (quadratic patterns on
64 KiB of ``token``) is sent again, several at once, while /healthz is polled:
some health check must come back while the hostile requests are still running.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.conftest import ServerProcess, shared_server, tls_context

PROJECT = {"workspace": "default", "project": "hostile"}
HOSTILE_PROMPTS = {
    "token": "token" * 13107,  # 64 KiB
    "password": "password" * 8192,
    "scheme": "a." * 32000 + "://",
    "assign": "api_key_" * 8000 + '"',
}
LONG_TOOL_NAME = "token" * 16000  # 80,000 characters


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the file: each test posts under sessions of its own."""
    with shared_server(tmp_path_factory, "hostile") as proc:
        yield proc


def _hook(event: str, session: str) -> dict[str, str]:
    return {**PROJECT, "agent": "claude-code", "event": event, "session_id": session}


def _while_healthz(server: ServerProcess, work: list[Callable[[httpx.Client], Any]]) -> list[Any]:
    """Run ``work`` in threads; poll /healthz meanwhile; the health checks answered in time."""
    results: list[Any] = []
    done = threading.Event()
    answered_during: list[int] = []

    def run_all() -> None:
        with server.client(timeout=120) as client:
            threads = [
                threading.Thread(target=lambda job=job: results.append(job(client))) for job in work
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        done.set()

    runner = threading.Thread(target=run_all)
    runner.start()
    with httpx.Client(base_url=server.url, timeout=120, verify=tls_context()) as health:
        while not done.is_set():
            status = health.get("/healthz").status_code
            if not done.is_set():
                answered_during.append(status)
    runner.join()
    assert answered_during and set(answered_during) == {200}, answered_during
    return results


def _observations(server: ServerProcess, session: str) -> list[dict[str, Any]]:
    with server.client() as client:
        answer = client.get(
            f"/api/v1/sessions/{session}/observations", params={**PROJECT, "limit": 200}
        )
    assert answer.status_code == 200, answer.text
    observations: list[dict[str, Any]] = answer.json()["observations"]
    return observations


def test_hostile_prompts_and_tool_names_are_answered_while_healthz_keeps_answering(
    server: ServerProcess,
) -> None:
    def prompt(name: str, text: str) -> Callable[[httpx.Client], Any]:
        def post(client: httpx.Client) -> int:
            params = _hook("UserPromptSubmit", f"hostile-{name}")
            return client.post("/hook", params=params, json={"prompt": text}).status_code

        return post

    def tool(client: httpx.Client) -> int:
        body = {"tool_name": LONG_TOOL_NAME, "tool_input": {"command": "token" * 13107}}
        return client.post(
            "/hook", params=_hook("PostToolUse", "hostile-tool"), json=body
        ).status_code

    work = [prompt(name, text) for name, text in HOSTILE_PROMPTS.items() for _ in range(3)]
    statuses = _while_healthz(server, [*work, tool, tool])
    assert statuses == [202] * len(statuses)

    for name in HOSTILE_PROMPTS:
        stored = _observations(server, f"hostile-{name}")
        assert len(stored) == 3
        assert all(len(o["body"].encode()) <= 16 * 1024 for o in stored)
    tools = _observations(server, "hostile-tool")
    assert len(tools) == 2
    assert all(o["tool_name"] is None or len(o["tool_name"]) <= 100 for o in tools)


def test_a_batch_of_hostile_items_is_answered_item_by_item_while_healthz_answers(
    server: ServerProcess,
) -> None:
    items = [
        {"params": _hook("UserPromptSubmit", "hostile-batch"), "body": {"prompt": text}}
        for text in list(HOSTILE_PROMPTS.values()) * 5
    ]
    assert sum(len(str(i)) for i in items) > 300 * 1024

    def batch(client: httpx.Client) -> list[int]:
        answer = client.post("/hook/batch", json=items)
        assert answer.status_code == 200, answer.text
        return [r["status"] for r in answer.json()["results"]]

    (statuses,) = _while_healthz(server, [batch])
    assert statuses == [202] * len(items)
    assert len(_observations(server, "hostile-batch")) == len(items)


def test_a_hostile_handoff_is_stored_redacted_while_healthz_answers(
    server: ServerProcess,
) -> None:
    secret = "ghp_" + "Q7" * 18
    summary = ("password=" + "token" * 700)[:3900] + " " + secret

    def begin(client: httpx.Client) -> int:
        body = {
            **PROJECT,
            "summary": summary,
            "next_steps": ["token" * 1000, f"use {secret}"],
            "content": {"notes": "password" * 3000},
        }
        answer = client.post("/api/v1/handoffs", json=body)
        assert answer.status_code == 201, answer.text
        assert secret not in answer.text
        return answer.status_code

    statuses = _while_healthz(server, [begin] * 4)
    assert statuses == [201] * 4


def test_a_lone_surrogate_in_a_tool_name_is_stored_not_a_500(server: ServerProcess) -> None:
    # JSON can spell a lone surrogate; the linear-time matcher reads UTF-8, which cannot.
    raw = b'{"tool_name": "\\ud800", "tool_input": {"command": "ls \\udfff"}}'
    batch = b'[{"params": %s, "body": %s}]' % (
        b'{"project": "hostile", "agent": "claude-code", "event": "PostToolUse"}',
        raw,
    )
    with server.client() as client:
        single = client.post(
            "/hook",
            params=_hook("PostToolUse", "s-surrogate"),
            content=raw,
            headers={"content-type": "application/json"},
        )
        assert single.status_code == 202, single.text
        many = client.post(
            "/hook/batch", content=batch, headers={"content-type": "application/json"}
        )
        assert many.status_code == 200, many.text
        assert [r["status"] for r in many.json()["results"]] == [202], many.text
        assert client.get("/healthz").status_code == 200
