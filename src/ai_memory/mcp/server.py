"""The MCP server: every tool registered, served at /mcp by ``ai_memory.mcp.lazy``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as MCPTool
from pydantic import ValidationError
from starlette.routing import Route

from ai_memory import __version__
from ai_memory.mcp import (
    tools_batch,
    tools_consolidate,
    tools_explore,
    tools_learning,
    tools_lifecycle,
    tools_messages,
    tools_query,
    tools_read,
    tools_sessions,
    tools_status,
    tools_write,
)
from ai_memory.mcp.args import check_text_arguments
from ai_memory.mcp.deps import Ctx, ToolDeps, acting_for
from ai_memory.mcp.errors import invalid_params
from ai_memory.mcp.instructions import server_instructions
from ai_memory.mcp.lazy import MCP_PATH
from ai_memory.mcp.wire_check import RefuseUnstorableArguments
from ai_memory.runtime import Runtime

# Argument names that are Python keywords: ``global`` on the wire, ``global_`` in code.
WIRE_NAMES = {"global_": "global", "search_": "search"}


class MemoryServer(MCPServer[Any]):
    """Arguments that fail the schema become -32602 errors naming the argument."""

    async def list_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        for tool in tools:
            properties = tool.input_schema.get("properties", {})
            for code_name, wire_name in WIRE_NAMES.items():
                if code_name in properties:
                    properties[wire_name] = properties.pop(code_name)
        return tools

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Ctx | None = None
    ) -> CallToolResult | InputRequiredResult:
        arguments = dict(arguments)
        for code_name, wire_name in WIRE_NAMES.items():
            if wire_name in arguments:
                arguments[code_name] = arguments.pop(wire_name)
        check_text_arguments(arguments)
        with acting_for(context):
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                if isinstance(exc.__cause__, ValidationError):
                    raise invalid_params(exc.__cause__) from exc
                raise


def build_server(get_runtime: Callable[[], Runtime | None]) -> MemoryServer:
    server = MemoryServer(
        "ai-memory",
        title="ai-memory",
        instructions=server_instructions(),
        version=__version__,
        log_level="WARNING",
    )
    deps = ToolDeps(get_runtime)
    for group in (tools_query, tools_read, tools_write, tools_status, tools_sessions):
        group.register(server, deps)
    tools_lifecycle.register(server, deps)
    tools_consolidate.register(server, deps)
    tools_explore.register(server, deps)
    tools_learning.register(server, deps)
    tools_messages.register(server, deps)
    tools_batch.register(server, deps)
    return server


def endpoint_of(server: MemoryServer) -> Any:
    """The streamable HTTP endpoint of ``server`` (stateless, JSON answers), as one ASGI app.

    The caller enters ``server.session_manager.run()`` before sending it requests
    (``ai_memory.mcp.lazy`` does). The SDK's own Host/Origin check is off: the
    app's one rule (``ai_memory.web.origin``) guards /mcp like every other route.
    """
    sub = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    for route in sub.routes:
        if isinstance(route, Route) and route.path == MCP_PATH:
            return RefuseUnstorableArguments(route.app)
    raise RuntimeError(f"the MCP SDK served no {MCP_PATH} route")
