"""Signing a browser in to the UI: cookies, their CSRF tokens, safe redirect targets.

Browsers cannot send a bearer header, so ``/web/login`` trades a credential for
a cookie. Once a user has a password, the cookie is a server-side session's
random id (``store.web_sessions`` keeps only its hash) and acts as that user.
Before then (a single-user install) the root token signs in, and the cookie is
an HMAC of the token, not the token: it stops working when the token is rotated
or the first password is set. Either cookie opens the UI's pages (GET/HEAD under
/web), never the API; its POSTs (the pending-writes decisions, sign-out, setup)
also need the form's CSRF token, an HMAC keyed by the cookie's own value, so a
page elsewhere, which cannot read the cookie, cannot forge one. The sign-in form
has its own short-lived cookie for the same purpose. Standard library only: the
auth middleware imports it.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

COOKIE_NAME = "ai_memory_web"
COOKIE_PATH = "/web"
COOKIE_MAX_AGE_S = 7 * 24 * 3600
WEB_HOME = "/web"
LOGIN_PATH = "/web/login"
LOGOUT_PATH = "/web/logout"
SETUP_PATH = "/web/setup"
STYLE_PATH = "/web/style.css"
SIGNIN_COOKIE = "ai_memory_signin"  # the sign-in form's CSRF cookie, before any session
_COOKIE_LABEL = b"ai-memory web ui cookie v1"
_CSRF_LABEL = b"ai-memory web ui csrf v1:"
WEB_FORM_PREFIX = "/web/pending-writes/"  # the pending-writes decisions take a POST
COOKIE_POSTS = frozenset({LOGOUT_PATH, SETUP_PATH})  # and these, with the cookie's CSRF


def is_web_path(path: str) -> bool:
    return path == WEB_HOME or path.startswith(WEB_HOME + "/")


def token_matches(given: str, token: str) -> bool:
    """Constant-time comparison; any text is accepted as input, none raises."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def cookie_for(token: str) -> str:
    return hmac.new(token.encode("utf-8"), _COOKIE_LABEL, hashlib.sha256).hexdigest()


def accepts_cookie(method: str, path: str) -> bool:
    """GET/HEAD of any UI page; POST only to the pending-writes forms, sign-out and setup."""
    if method in ("GET", "HEAD"):
        return is_web_path(path)
    return method == "POST" and (path.startswith(WEB_FORM_PREFIX) or path in COOKIE_POSTS)


def cookie_value(cookie_header: bytes | str, name: str = COOKIE_NAME) -> str | None:
    """The first value of cookie ``name`` in a ``Cookie`` header, or None."""
    text = cookie_header.decode("latin-1") if isinstance(cookie_header, bytes) else cookie_header
    for part in text.split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key == name and value.strip():
            return value.strip()
    return None


def new_form_secret() -> str:
    """The value of the sign-in form's cookie: 256 random bits."""
    return secrets.token_urlsafe(32)


def csrf_of_cookie(value: str) -> str:
    """The form token bound to one cookie value (a session, or the token's cookie)."""
    return hmac.new(value.encode("utf-8", "replace"), _CSRF_LABEL, hashlib.sha256).hexdigest()


def csrf_for(token: str) -> str:
    """The form token of the web session that holds this token's cookie."""
    return csrf_of_cookie(cookie_for(token))


def csrf_in(cookie_header: bytes | str, name: str = COOKIE_NAME) -> str:
    """The form token for the cookie this request carries; empty when it carries none."""
    value = cookie_value(cookie_header, name)
    return csrf_of_cookie(value) if value is not None else ""


def csrf_matches(given: str, cookie_header: bytes | str, name: str = COOKIE_NAME) -> bool:
    """True when ``given`` is the form token of the request's own cookie."""
    expected = csrf_in(cookie_header, name)
    return bool(expected) and hmac.compare_digest(
        given.encode("utf-8", "replace"), expected.encode()
    )


def safe_next(target: str | None) -> str:
    """``target`` when it is a path of this UI, else the UI's home: never an open redirect."""
    if not target or any(ord(ch) < 0x20 or ch in "\\\x7f" for ch in target):
        return WEB_HOME
    parts = urlsplit(target)
    if parts.scheme or parts.netloc or target.startswith("//"):
        return WEB_HOME
    if not is_web_path(parts.path) or parts.path in (LOGIN_PATH, LOGOUT_PATH):
        return WEB_HOME
    if "/." in parts.path or "%2e" in parts.path.lower():  # no climbing out of /web
        return WEB_HOME
    return target
