"""Authenticating the UI cookie on every request: a web session, or the bootstrap token cookie.

A session is looked up by its hash each time (one indexed read, no cache), so a
sign-out, a password reset or a disabled user ends it on the next request. The
token's cookie acts as the operator only while no user has a password: the first
human account retires it.
"""

from __future__ import annotations

from collections.abc import Callable

from ai_memory.core.clock import now_iso
from ai_memory.core.principal import Principal
from ai_memory.runtime import Runtime
from ai_memory.store import passwords, web_sessions
from ai_memory.web import webauth


class CookieAuthenticator:
    def __init__(self, get_runtime: Callable[[], Runtime | None], token: str) -> None:
        self._get_runtime = get_runtime
        self._token_cookie = webauth.cookie_for(token)

    async def __call__(self, cookie_header: bytes) -> Principal | None:
        value = webauth.cookie_value(cookie_header)
        runtime = self._get_runtime()
        if value is None or runtime is None:
            return None
        if webauth.token_matches(value, self._token_cookie):
            retired = await runtime.readers.aread(passwords.any_password)
            return None if retired else Principal.root()
        now = now_iso()
        return await runtime.readers.aread(
            lambda conn: web_sessions.principal_for(conn, value, now)
        )
