"""The one place domain errors become MCP answers.

Invalid arguments are protocol errors (JSON-RPC -32602, the message names the
argument) so a client can tell a malformed call from a failed one; every other
domain error is a tool result with ``is_error`` and a stable ``code`` the agent
can act on (``precondition_failed`` carries the current version; ``forbidden``,
a project or session the caller's user may not use, names the user and the
project and nothing of its contents).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from ai_memory.core.errors import AiMemoryError, InvalidInput, TooLarge


class InvalidArgument(InvalidInput):
    """An argument that passed the schema but not the domain's checks."""

    def __init__(self, argument: str, message: str) -> None:
        super().__init__(f"invalid argument {argument!r}: {message}", argument=argument)
        self.argument = argument


@contextmanager
def argument(name: str) -> Iterator[None]:
    """Blame ``name`` for any invalid-input error raised inside the block."""
    try:
        yield
    except InvalidArgument:
        raise
    except InvalidInput as exc:
        raise InvalidArgument(name, exc.message) from exc


def invalid_params(exc: ValidationError) -> MCPError:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        problems.append(f"invalid argument {where!r}: {error.get('msg')}")
    return MCPError(INVALID_PARAMS, "; ".join(problems)[:2000])


def domain_error(exc: AiMemoryError) -> CallToolResult | MCPError:
    """Map one domain error; the caller raises an :class:`MCPError` and returns a result."""
    if isinstance(exc, InvalidInput) and not isinstance(exc, TooLarge):
        return MCPError(INVALID_PARAMS, exc.message, {"error": exc.code, **exc.details})
    return error_result(exc.code, exc.message, **exc.details)


def error_result(code: str, message: str, **details: Any) -> CallToolResult:
    payload = {"error": code, "message": message, **details}
    return CallToolResult(
        content=[TextContent(type="text", text=dumps(payload))],
        structured_content=payload,
        is_error=True,
    )


def ok(data: dict[str, Any]) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=dumps(data))], structured_content=data
    )


def dumps(data: Any) -> str:
    """Compact JSON: tool output counts against the agent's context window."""
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)
