"""``/web/setup``: create the first human account from the browser, once.

Reachable only by the operator (signed in with the token) while no user has a
password: it adds an admin with the password given, signs the browser in as them,
and from then on the page is gone and the token signs in to nothing here. The
form carries the token cookie's CSRF token, like every other form of the UI.
"""

from __future__ import annotations

import asyncio
import sqlite3

from fastapi import APIRouter, Request
from fastapi.responses import Response

from ai_memory.core.clock import now_iso
from ai_memory.core.errors import Conflict, InvalidInput
from ai_memory.core.principal import Principal, principal_in
from ai_memory.runtime import Runtime
from ai_memory.store import identity_admin, passwords
from ai_memory.web import signin, webauth
from ai_memory.web.login import STALE_FORM, client_address, same_origin, signed_in
from ai_memory.web.ui_common import READ, RuntimeDep
from ai_memory.web.ui_pending import read_form
from ai_memory.web.views import Views

DONE = "The first account exists: sign in with it (ai-memory user passwd NAME resets one)."


def build_setup_router(views: Views) -> APIRouter:
    router = APIRouter(include_in_schema=False)

    async def refusal(request: Request, runtime: Runtime) -> Response | None:
        if await signin.token_retired(runtime):
            return views.error(403, DONE)
        if not principal_in(request.scope).is_root:
            return views.error(403, "Only the operator, signed in with the token, sets up.")
        return None

    def form(
        request: Request, status: int = 200, error: str | None = None, name: str = ""
    ) -> Response:
        csrf = webauth.csrf_in(request.headers.get("cookie", ""))
        return same_origin(views.html("setup.html", status, csrf=csrf, error=error, name=name))

    @router.api_route("/setup", methods=READ)
    async def setup_page(request: Request, runtime: RuntimeDep) -> Response:
        refused = await refusal(request, runtime)
        return refused if refused is not None else form(request)

    @router.post("/setup")
    async def setup(request: Request, runtime: RuntimeDep) -> Response:
        refused = await refusal(request, runtime)
        if refused is not None:
            return refused
        fields = await read_form(request)
        cookie = request.headers.get("cookie", "")
        if fields is None or not webauth.csrf_matches(fields.get("csrf", ""), cookie):
            return views.error(403, STALE_FORM)
        name = fields.get("name", "").strip()
        try:
            identity_admin.validate_user_name(name)
            if fields.get("password", "") != fields.get("again", ""):
                raise InvalidInput("the two passwords differ")
            hashed = await asyncio.to_thread(passwords.hash_password, fields.get("password", ""))
            user = await runtime.writer.run(lambda conn: first_admin(conn, name, hashed), timeout=5)
        except (InvalidInput, Conflict) as exc:
            return form(request, exc.http_status, exc.message, name)
        session_id = await signin.open_session(runtime, user, client_address(request))
        return signed_in(request, session_id, webauth.WEB_HOME)

    return router


def first_admin(conn: sqlite3.Connection, name: str, password_hash: str) -> Principal:
    """Add ``name`` as an admin with a password, unless someone did first; their principal."""
    if passwords.any_password(conn):
        raise Conflict(DONE)
    now = now_iso()
    identity_admin.add_user(conn, name, admin=True, now=now)
    passwords.set_password(conn, name, password_hash, now=now)
    account = passwords.account(conn, name)
    assert account is not None
    return account.principal
