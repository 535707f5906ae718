"""``/web/login``: sign in with a user name and password (or, until a user has one, the token);
``/web/logout``: end the session.

A password sign-in opens a server-side session (``store.web_sessions``) whose
random id is the cookie; its form carries a CSRF token bound to a short-lived
sign-in cookie, so another site cannot sign a browser in to an account of its
choosing. Attempts are rate-limited per name and per address, the token form's
per address (429 with ``Retry-After``), and audited without letting a guesser
grow the audit log faster than the limits let attempts in. The token form serves
a single-user install exactly as before, and goes once the first password is set.
"""

from __future__ import annotations

from importlib.resources import files

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ai_memory.core.principal import Principal, principal_in
from ai_memory.runtime import Runtime
from ai_memory.web import signin, webauth
from ai_memory.web.signin_limit import SignInLimiter
from ai_memory.web.ui_common import RuntimeDep
from ai_memory.web.ui_pending import read_form
from ai_memory.web.views import SECURITY_HEADERS, Views

SIGNIN_COOKIE_MAX_AGE_S = 3600
NO_MATCH = "That user name and password do not match."
TOKEN_RETIRED = (
    "The server's token no longer signs in here: sign in with your user name and password."
)
STALE_FORM = "This form is out of date or did not come from this page; reload it."


def build_login_router(views: Views, token: str) -> APIRouter:
    """Routes relative to /web; the UI router includes them under its prefix."""
    router = APIRouter(include_in_schema=False)
    stylesheet = files("ai_memory.web").joinpath("static/style.css").read_text("utf-8")
    limiter = SignInLimiter()  # this app's memory of failed attempts

    async def page(
        request: Request, runtime: Runtime, next_: str | None, error: str | None, status: int = 200
    ) -> Response:
        """The sign-in form: the token's while no user has a password, else name and password."""
        target = webauth.safe_next(next_)
        if not await signin.token_retired(runtime):
            return same_origin(
                views.html("login.html", status, mode="token", next=target, error=error)
            )
        held = webauth.cookie_value(request.headers.get("cookie", ""), webauth.SIGNIN_COOKIE)
        value = held or webauth.new_form_secret()
        response = views.html(
            "login.html",
            status,
            mode="password",
            next=target,
            error=error,
            csrf=webauth.csrf_of_cookie(value),
        )
        if held is None:
            set_cookie(request, response, webauth.SIGNIN_COOKIE, value, SIGNIN_COOKIE_MAX_AGE_S)
        return same_origin(response)

    async def limited(
        request: Request, runtime: Runtime, name: str | None, next_: str | None
    ) -> Response | None:
        """The 429 when a limit refuses this attempt; None when it may go ahead.

        Only the refusal that engages a limit is audited; the ones after it are
        counted, and their number is audited once the limit lets an attempt in.
        """
        address = client_address(request)
        admission = limiter.admit(name, address)
        for ended in admission.ended:
            lifted = {"outcome": "rate_limit_lifted", "suppressed": ended.suppressed}
            await signin.audit_limit(runtime, name, ended.limit, lifted | {"address": address})
        if admission.wait is None:
            return None
        if admission.engaged is not None:
            engaged = {"outcome": "rate_limited", "address": address}
            await signin.audit_limit(runtime, name, admission.engaged, engaged)
        message = f"Too many failed sign-ins; try again in {admission.wait} s."
        response = await page(request, runtime, next_, message, 429)
        response.headers["retry-after"] = str(admission.wait)
        return response

    async def with_token(
        request: Request, runtime: Runtime, given: str, next_: str | None
    ) -> Response:
        address = client_address(request)
        refused = await limited(request, runtime, None, next_)
        if refused is not None:
            return refused
        if await signin.token_retired(runtime):
            await signin.audit_attempt(
                runtime, signin.UNKNOWN, {"outcome": "token_retired", "address": address}
            )
            return await page(request, runtime, next_, TOKEN_RETIRED, 401)
        if not webauth.token_matches(given, token):
            await signin.audit_attempt(
                runtime, signin.UNKNOWN, {"outcome": "wrong_token", "address": address}
            )
            return views.html(
                "login.html", 401, mode="token", next=webauth.safe_next(next_), error=INVALID_TOKEN
            )
        limiter.succeeded(None, address)
        await signin.audit_attempt(
            runtime, Principal.root(), {"outcome": "ok", "method": "token", "address": address}
        )
        return signed_in(request, webauth.cookie_for(token), next_)

    async def with_password(
        request: Request, runtime: Runtime, form: dict[str, str], next_: str | None
    ) -> Response:
        if not webauth.csrf_matches(
            form.get("csrf", ""), request.headers.get("cookie", ""), webauth.SIGNIN_COOKIE
        ):
            return await page(request, runtime, next_, STALE_FORM, 403)
        name, password = form.get("name", "").strip(), form.get("password", "")
        if not name or not password:
            return await page(request, runtime, next_, "Give your user name and password.", 400)
        address = client_address(request)
        refused = await limited(request, runtime, name, next_)
        if refused is not None:
            return refused
        user, who = await signin.check_password(runtime, name, password)
        if user is None:
            await signin.audit_attempt(runtime, who, {"outcome": "failed", "address": address})
            return await page(request, runtime, next_, NO_MATCH, 401)
        limiter.succeeded(name, address)
        held = webauth.cookie_value(request.headers.get("cookie", ""))
        session_id = await signin.open_session(runtime, user, address, replaces=held)
        response = signed_in(request, session_id, next_)
        response.delete_cookie(webauth.SIGNIN_COOKIE, path=webauth.LOGIN_PATH)
        return response

    @router.api_route("/login", methods=["GET", "HEAD"])
    async def login_page(
        request: Request, runtime: RuntimeDep, token: str | None = None, next: str | None = None
    ) -> Response:
        if token is not None:
            return await with_token(request, runtime, token, next)
        return await page(request, runtime, next, None)

    @router.post("/login")
    async def login_form(request: Request, runtime: RuntimeDep) -> Response:
        form = await read_form(request)
        if form is None:
            return await page(request, runtime, None, "The form is too large or unreadable.", 400)
        next_ = form.get("next")
        if "token" in form or not await signin.token_retired(runtime):
            given = form.get("token", "").strip()
            if not given:
                return await page(request, runtime, next_, "Paste the token.", 400)
            return await with_token(request, runtime, given, next_)
        return await with_password(request, runtime, form, next_)

    @router.get("/logout")
    async def logout_page(request: Request) -> Response:
        """A session's sign-out is a form (a link could be forged); the token's cookie just goes."""
        cookie = request.headers.get("cookie", "")
        if principal_in(request.scope).user_id is None:
            return signed_out()
        return same_origin(views.html("logout.html", csrf=webauth.csrf_in(cookie)))

    @router.post("/logout")
    async def logout(request: Request, runtime: RuntimeDep) -> Response:
        cookie = request.headers.get("cookie", "")
        form = await read_form(request)
        if form is None or not webauth.csrf_matches(form.get("csrf", ""), cookie):
            return views.error(403, STALE_FORM)
        session_id = webauth.cookie_value(cookie)
        user = principal_in(request.scope)
        if session_id is not None and user.user_id is not None:
            await signin.end_session(runtime, user, session_id)
        return signed_out()

    @router.api_route("/style.css", methods=["GET", "HEAD"])
    async def style() -> Response:
        headers = {**SECURITY_HEADERS, "cache-control": "max-age=3600"}
        return Response(stylesheet, media_type="text/css", headers=headers)

    return router


INVALID_TOKEN = "That token is not valid."


def signed_in(request: Request, cookie: str, next_: str | None) -> Response:
    response = RedirectResponse(webauth.safe_next(next_), status_code=303)
    set_cookie(request, response, webauth.COOKIE_NAME, cookie, webauth.COOKIE_MAX_AGE_S)
    response.headers["cache-control"] = "no-store"
    response.headers["referrer-policy"] = "no-referrer"
    return response


def same_origin(response: Response) -> Response:
    """A page with a form: its POST must carry the page's Origin (``no-referrer`` sends "null")."""
    response.headers["referrer-policy"] = "same-origin"
    return response


def signed_out() -> Response:
    response = RedirectResponse(webauth.LOGIN_PATH, status_code=303)
    response.delete_cookie(
        webauth.COOKIE_NAME, path=webauth.COOKIE_PATH, httponly=True, samesite="strict"
    )
    return response


def set_cookie(request: Request, response: Response, name: str, value: str, max_age: int) -> None:
    """HttpOnly, SameSite=Strict, and Secure whenever the page came over https."""
    path = webauth.COOKIE_PATH if name == webauth.COOKIE_NAME else webauth.LOGIN_PATH
    response.set_cookie(
        name,
        value,
        max_age=max_age,
        path=path,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
    )


def client_address(request: Request) -> str:
    return request.client.host if request.client is not None else "unknown"
