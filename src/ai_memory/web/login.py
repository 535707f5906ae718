"""``/web/login``: trade the bearer token for the UI cookie; ``/web/logout`` drops it."""

from __future__ import annotations

from importlib.resources import files
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from ai_memory.web import webauth
from ai_memory.web.views import SECURITY_HEADERS, Views

MAX_FORM_BYTES = 8192


def build_login_router(views: Views, token: str) -> APIRouter:
    """Routes relative to /web; the UI router includes them under its prefix."""
    router = APIRouter(include_in_schema=False)
    stylesheet = files("ai_memory.web").joinpath("static/style.css").read_text("utf-8")

    def signed_in(given: str, next_: str | None) -> Response:
        if not webauth.token_matches(given, token):
            return views.html(
                "login.html", 401, next=webauth.safe_next(next_), error="That token is not valid."
            )
        response = RedirectResponse(webauth.safe_next(next_), status_code=303)
        response.set_cookie(
            webauth.COOKIE_NAME,
            webauth.cookie_for(token),
            max_age=webauth.COOKIE_MAX_AGE_S,
            path=webauth.COOKIE_PATH,
            httponly=True,
            samesite="strict",
        )
        response.headers["cache-control"] = "no-store"
        response.headers["referrer-policy"] = "no-referrer"
        return response

    @router.api_route("/login", methods=["GET", "HEAD"])
    async def login_page(token: str | None = None, next: str | None = None) -> Response:
        if token is not None:
            return signed_in(token, next)
        return views.html("login.html", next=webauth.safe_next(next), error=None)

    @router.post("/login")
    async def login_form(request: Request) -> Response:
        body = await request.body()
        if len(body) > MAX_FORM_BYTES:
            return views.html("login.html", 400, next=webauth.WEB_HOME, error="Form too large.")
        try:
            form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=10)
        except ValueError:
            form = {}
        next_ = form.get("next", [None])[0]
        given = form.get("token", [""])[0].strip()
        if not given:
            return views.html(
                "login.html", 400, next=webauth.safe_next(next_), error="Paste the token."
            )
        return signed_in(given, next_)

    @router.get("/logout")
    async def logout() -> Response:
        response = RedirectResponse(webauth.LOGIN_PATH, status_code=303)
        response.delete_cookie(
            webauth.COOKIE_NAME, path=webauth.COOKIE_PATH, httponly=True, samesite="strict"
        )
        return response

    @router.api_route("/style.css", methods=["GET", "HEAD"])
    async def style() -> Response:
        headers = {**SECURITY_HEADERS, "cache-control": "max-age=3600"}
        return Response(stylesheet, media_type="text/css", headers=headers)

    return router
