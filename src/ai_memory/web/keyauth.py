"""Authenticating an API key to its user on every request, so revocation applies at once.

The lookup is one indexed read; the key's last-used time is written at most once
a minute per key, off the request's path, so a busy hook stream costs no writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from ai_memory.core.apikeys import KEY_START
from ai_memory.core.clock import now_iso
from ai_memory.core.errors import AiMemoryError
from ai_memory.core.principal import Principal
from ai_memory.runtime import Runtime
from ai_memory.store import identity

TOUCH_EVERY_S = 60.0


class KeyAuthenticator:
    def __init__(self, get_runtime: Callable[[], Runtime | None]) -> None:
        self._get_runtime = get_runtime
        self._touched: dict[int, float] = {}  # key id -> monotonic time of the last write

    async def __call__(self, presented: str) -> Principal | None:
        runtime = self._get_runtime()
        if runtime is None or not presented.startswith(KEY_START):
            return None
        principal = await runtime.readers.aread(
            lambda conn: identity.principal_for_key(conn, presented)
        )
        if principal is not None and principal.key_id is not None:
            self._touch(runtime, principal.key_id)
        return principal

    def _touch(self, runtime: Runtime, key_id: int) -> None:
        now = time.monotonic()
        if now - self._touched.get(key_id, -TOUCH_EVERY_S) < TOUCH_EVERY_S:
            return
        self._touched[key_id] = now
        stamp = now_iso()
        try:
            runtime.writer.submit(lambda conn: identity.touch_key(conn, key_id, stamp))
        except AiMemoryError:  # a full queue or a stopping writer: the next request retries
            self._touched.pop(key_id, None)
