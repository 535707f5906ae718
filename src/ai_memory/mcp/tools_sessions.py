"""Handoffs and session observations over MCP."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from ai_memory.mcp.deps import ToolDeps


def register(server: MCPServer[Any], deps: ToolDeps) -> None:
    """Registered once capture's handoff functions are wired."""
