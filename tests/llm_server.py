"""A real server whose [llm] provider is the fake service on loopback, and MCP calls to it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, clean_env
from tests.fake_llm import FakeLlm
from tests.llm_support import llm_env
from tests.mcp_support import connect, data


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLlm]:
    """One fake service for a test module."""
    with FakeLlm() as service:
        yield service


@pytest.fixture(autouse=True)
def clean(fake: FakeLlm) -> Iterator[None]:
    """Each test starts with no scripted replies and no recorded requests."""
    fake.replies.clear()
    fake.requests.clear()
    yield
    fake.replies.clear()


@contextmanager
def llm_server(
    tmp_path_factory: pytest.TempPathFactory, fake: FakeLlm | None, **settings: str
) -> Iterator[ServerProcess]:
    """A server on a fresh data dir; ``fake`` None means no provider configured.
    ``settings`` are extra environment overrides, e.g. AI_MEMORY_ANSWERS__RERANK="true"."""
    root = tmp_path_factory.mktemp("llm") / "data"
    initialise(Config.load(root, {}))
    provider = llm_env("openai-compat", fake.openai_url) if fake else {}
    proc = ServerProcess(root, env=clean_env(**provider, **settings)).start()
    try:
        yield proc
    finally:
        proc.stop()


async def _call(srv: ServerProcess, name: str, args: dict[str, Any]) -> Any:
    async with connect(srv) as client:
        try:
            return await client.call_tool(name, args)
        except MCPError as exc:
            error = exc
    raise error


def call(srv: ServerProcess, name: str, **args: Any) -> dict[str, Any]:
    """A successful tool call's structured answer."""
    return data(asyncio.run(_call(srv, name, args)))


def call_error(srv: ServerProcess, name: str, **args: Any) -> MCPError:
    with pytest.raises(MCPError) as caught:
        asyncio.run(_call(srv, name, args))
    return caught.value


PAGES = {
    "concepts/wal.md": "# WAL\n\nWAL lets readers proceed while one writer commits to the log.",
    "gotchas/busy.md": "# Busy\n\nSQLITE_BUSY appears when two writers race; the writer "
    "queue serialises them.",
    "decisions/sqlite.md": "# SQLite\n\nWe chose SQLite with WAL for the page store: one file, "
    "readers never block.",
}


def seed(srv: ServerProcess, project: str) -> dict[str, int]:
    """The three pages written in ``project``; their page_ids by path."""
    return {
        path: call(srv, "memory_write_page", project=project, path=path, body=body)["page_id"]
        for path, body in PAGES.items()
    }


def without_timings(answer: dict[str, Any]) -> dict[str, Any]:
    """A query answer with what varies between two identical calls left out."""
    return {key: value for key, value in answer.items() if key != "timings"}
