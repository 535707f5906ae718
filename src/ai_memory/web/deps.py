"""Request-scoped access to the runtime the server assembled."""

from __future__ import annotations

from fastapi import Request

from ai_memory.runtime import Runtime


async def get_runtime(request: Request) -> Runtime:
    """Async, so FastAPI calls it on the event loop rather than in a worker thread."""
    runtime: Runtime = request.app.state.runtime
    return runtime
