"""Signing a browser in to the read-only UI: token check, cookie, safe redirect targets.

Browsers cannot send a bearer header, so ``/web/login`` trades the token for a
cookie. The cookie holds an HMAC of the token, not the token: a leaked cookie
opens only the read-only pages (GET/HEAD under /web), never the API, and it
stops working when the token is rotated. The one write it also carries is a
decision on the pending-writes queue (POST under ``WEB_FORM_PREFIX``), and only
with the form's CSRF token, an HMAC bound to that cookie. Standard library only: the auth
middleware imports it.
"""

from __future__ import annotations

import hashlib
import hmac
from urllib.parse import urlsplit

COOKIE_NAME = "ai_memory_web"
COOKIE_PATH = "/web"
COOKIE_MAX_AGE_S = 7 * 24 * 3600
WEB_HOME = "/web"
LOGIN_PATH = "/web/login"
LOGOUT_PATH = "/web/logout"
STYLE_PATH = "/web/style.css"
_COOKIE_LABEL = b"ai-memory web ui cookie v1"
_CSRF_LABEL = b"ai-memory web ui csrf v1:"
WEB_FORM_PREFIX = "/web/pending-writes/"  # the only web pages that take a POST


def is_web_path(path: str) -> bool:
    return path == WEB_HOME or path.startswith(WEB_HOME + "/")


def token_matches(given: str, token: str) -> bool:
    """Constant-time comparison; any text is accepted as input, none raises."""
    return hmac.compare_digest(given.encode("utf-8", "replace"), token.encode("utf-8"))


def cookie_for(token: str) -> str:
    return hmac.new(token.encode("utf-8"), _COOKIE_LABEL, hashlib.sha256).hexdigest()


def accepts_cookie(method: str, path: str) -> bool:
    """GET/HEAD of any UI page; POST only to the pending-writes forms."""
    if method in ("GET", "HEAD"):
        return is_web_path(path)
    return method == "POST" and path.startswith(WEB_FORM_PREFIX)


def csrf_for(token: str) -> str:
    """The form token of the web session that holds this token's cookie."""
    key = token.encode("utf-8")
    return hmac.new(key, _CSRF_LABEL + cookie_for(token).encode(), hashlib.sha256).hexdigest()


def csrf_matches(given: str, token: str) -> bool:
    return hmac.compare_digest(given.encode("utf-8", "replace"), csrf_for(token).encode())


def cookie_matches(cookie_header: bytes, token: str) -> bool:
    """True when the ``Cookie`` header carries this token's UI cookie."""
    expected = cookie_for(token).encode()
    for part in cookie_header.split(b";"):
        name, sep, value = part.strip().partition(b"=")
        if sep and name == COOKIE_NAME.encode() and hmac.compare_digest(value.strip(), expected):
            return True
    return False


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
