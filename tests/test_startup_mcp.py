"""The MCP endpoint is built after the server answers; early /mcp requests wait for it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tests.conftest import ServerProcess, clean_env
from tests.mcp_support import connect, data

APP_WITHOUT_MCP = """
import sys
from pathlib import Path
from ai_memory.config import Config
from ai_memory.server import create_app
create_app(Config.load(Path(sys.argv[1]), {}), "token")
print(sorted(m for m in sys.modules if m.split(".")[0] in {"mcp", "mcp_types"}))
"""


def test_building_the_app_loads_no_mcp_sdk(data_dir: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", APP_WITHOUT_MCP, str(data_dir)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
        check=True,
    )
    assert done.stdout.strip() == "[]"


def test_the_first_mcp_request_after_start_is_answered(server: ServerProcess) -> None:
    """The fixture returns once /healthz answers, likely before /mcp is built: the first
    call waits for it, and is counted by its tool's access like any other."""

    async def first_call() -> list[str]:
        async with connect(server) as client:
            data(await client.call_tool("memory_recent", {"project": "api"}))
            return [tool.name for tool in (await client.list_tools()).tools]

    assert "memory_query" in asyncio.run(first_call())
    with server.client() as client:
        metrics = client.get("/admin/metrics").text
    assert 'ai_memory_mcp_tool_calls_total{access="read"} 1.0' in metrics
