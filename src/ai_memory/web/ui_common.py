"""What every UI route module shares: the runtime dependency, HTML errors, number parsing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import wraps
from typing import Annotated, ParamSpec

from fastapi import Depends
from fastapi.responses import Response

from ai_memory.core.errors import AiMemoryError, InvalidInput
from ai_memory.runtime import Runtime
from ai_memory.web.deps import get_runtime
from ai_memory.web.views import Views

P = ParamSpec("P")
RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
READ = ["GET", "HEAD"]
Handler = Callable[P, Awaitable[Response]]


def html_errors(views: Views) -> Callable[[Handler[P]], Handler[P]]:
    """Domain errors become the HTML error page with their own status."""

    def decorate(handler: Handler[P]) -> Handler[P]:
        @wraps(handler)
        async def guarded(*args: P.args, **kwargs: P.kwargs) -> Response:
            try:
                return await handler(*args, **kwargs)
            except AiMemoryError as exc:
                return views.error(exc.http_status, exc.message)

        return guarded

    return decorate


def parse_positive(value: str, name: str, *, most: int) -> int:
    if not value.isdigit() or not 1 <= int(value) <= most:
        raise InvalidInput(f"{name} must be a whole number from 1 to {most}")
    return int(value)
