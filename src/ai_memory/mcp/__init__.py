"""The agent-facing MCP surface: tools at /mcp, the stdio bridge, client configuration.

Keep this file empty of imports: the stdio bridge imports ``ai_memory.mcp.bridge``
and must not pay for the server side.
"""
