"""Whether a request is the only one the server is answering.

The connection protocol puts uvicorn's set of running request tasks (one set for every
connection of the server) in each request's scope. A request that finds itself alone in
it may be handled where a busy server would queue it (a hook event stored in place,
``Writer.run_if_idle``). Requests read by the same turn of the event loop have their
tasks in the set before the first of them runs, so concurrent clients are never alone.
"""

from __future__ import annotations

from collections.abc import Collection, MutableMapping
from typing import Any

REQUESTS_KEY = "ai_memory.requests"


def lone_request(scope: MutableMapping[str, Any]) -> bool:
    """True when ``scope``'s request is the server's only one in flight; False when it is
    not, or when the scope did not come through the server's own protocol."""
    requests: Collection[object] | None = scope.get(REQUESTS_KEY)
    return requests is not None and len(requests) <= 1
