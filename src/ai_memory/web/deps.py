"""Request-scoped access to the runtime the server assembled."""

from __future__ import annotations

from fastapi import Request

from ai_memory.runtime import Runtime


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime = request.app.state.runtime
    return runtime
