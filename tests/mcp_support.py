"""Helpers for the MCP tests: a real MCP client over real HTTP, and result unpacking."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

from ai_memory.cli.mcp import bridge_command
from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, clean_env


@asynccontextmanager
async def connect(
    server: ServerProcess, headers: dict[str, str] | None = None, token: str | None = None
) -> AsyncIterator[Client]:
    """The path today's agents use: streamable HTTP with the legacy initialize handshake."""
    auth = {"Authorization": f"Bearer {token or server.token}"}
    http = httpx2.AsyncClient(headers={**auth, **(headers or {})}, timeout=30)
    async with http:
        transport = streamable_http_client(f"{server.url}/mcp", http_client=http)
        async with Client(transport, mode="legacy") as client:
            yield client


def data(result: CallToolResult) -> dict[str, Any]:
    """A successful result's structured content, which must match its text content."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    text = result.content[0].text  # type: ignore[union-attr]
    assert json.loads(text) == result.structured_content
    return result.structured_content


def failure(result: CallToolResult) -> dict[str, Any]:
    assert result.is_error, result.structured_content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def module_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One real server for a whole test module (tests use distinct projects)."""
    root = tmp_path_factory.mktemp("mcp") / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root).start()
    try:
        yield proc
    finally:
        proc.stop()


def db_path(server: ServerProcess) -> Path:
    return server.data_dir / "db" / "memory.sqlite"


@asynccontextmanager
async def bridge(server: ServerProcess, cwd: Path, **env: str) -> AsyncIterator[Client]:
    """The stdio bridge as an agent launches it: a subprocess in the agent's directory."""
    launch = bridge_command(server.data_dir, server.url)
    params = StdioServerParameters(
        command=launch[0],
        args=launch[1:],
        env=clean_env(**env),
        cwd=cwd,
    )
    async with Client(params, mode="legacy") as client:
        yield client
