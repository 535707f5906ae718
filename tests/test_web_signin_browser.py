"""Signing in to the web UI in a real headless Chromium: a password, a wrong one, a forged
POST from another origin and one without its CSRF token, sign-out, the rate limit, and
the token sign-in's retirement once the first human account exists.

One server for the module, holding one pending write; the first test is the install
before anyone has a password. Skips, saying why, where Chromium is missing or cannot
start (see test_web_browser).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlencode

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.core.clock import now_iso
from ai_memory.core.identity import Scope
from ai_memory.maintenance.init import initialise
from ai_memory.runtime import Runtime
from ai_memory.store import pending_writes
from ai_memory.web.webauth import COOKIE_NAME
from tests.cdp_support import Browser
from tests.conftest import ServerProcess
from tests.team_support import make_user, set_password
from tests.test_web_browser import CHROMIUM, FLAGS, chromium_works

__all__ = ["chromium_works"]
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
ADMIN, ADMIN_PASSWORD = "olga", "olgas-password-1"
PROPOSED = "docs/forged.md"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("signin-browser") / "data"
    config = Config.load(root, {})
    initialise(config)
    runtime = Runtime.start(config, embed=False, search=False)
    try:  # one proposal waiting in the queue, as the learning loop leaves one
        runtime.writer.call(
            lambda conn: pending_writes.insert(
                conn,
                Scope.of("default", "shop").page(PROPOSED),
                session_id=None,
                snapshot=pending_writes.Snapshot(None, None),
                proposed="# Forged\n\nWritten only if approved.",
                rationale="a test proposal",
                now=now_iso(),
            )
        )
    finally:
        runtime.stop()
    proc = ServerProcess(root).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def admin(server: ServerProcess) -> str:
    """The admin the first test creates in the browser; made here when it ran alone."""
    with server.client() as root:
        names = [user["name"] for user in root.get("/admin/users").json()["users"]]
    if ADMIN not in names:
        make_user(server, ADMIN, admin=True)
        set_password(server, ADMIN, ADMIN_PASSWORD)
    return ADMIN


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Browser]:
    """One Chromium for the module: a start costs most of a second of CPU."""
    assert CHROMIUM is not None
    with Browser(CHROMIUM, tmp_path_factory.mktemp("signin-profile"), FLAGS) as started:
        yield started


@pytest.fixture
def tab(browser: Browser) -> Browser:
    """The module's browser as a fresh one is: no cookie, no cache, a blank page."""
    browser.call("Network.clearBrowserCookies")
    browser.call("Network.clearBrowserCache")
    browser.open("about:blank")
    assert session_cookie_count(browser) == 0
    return browser


def session_cookie_count(tab: Browser) -> int:
    return len(tab.call("Network.getAllCookies")["cookies"])


def type_into(tab: Browser, selector: str, text: str) -> None:
    """Focus a field and type into it, as a keyboard does."""
    tab.js(f"document.querySelector({selector!r}).focus()")
    tab.call("Input.insertText", text=text)


def sign_in(tab: Browser, server: ServerProcess, name: str, password: str) -> None:
    tab.open(f"{server.url}/web/login")
    type_into(tab, "#name", name)
    type_into(tab, "#password", password)
    tab.click("document.querySelector('#sign-in')")
    tab.wait_for("Page.loadEventFired")


def text_of(tab: Browser, selector: str) -> str | None:
    found = tab.js(f"document.querySelector({selector!r})?.innerText ?? null")
    return None if found is None else str(found)


def session_cookie(tab: Browser, server: ServerProcess) -> str | None:
    cookies = tab.call("Network.getCookies", urls=[f"{server.url}/web"])["cookies"]
    return next((c["value"] for c in cookies if c["name"] == COOKIE_NAME), None)


def pending_state(server: ServerProcess) -> str:
    with server.client() as client:
        listed = client.get("/api/v1/pending-writes", params={"state": "all"}).json()
    return str(next(w for w in listed["pending_writes"] if w["path"] == PROPOSED)["state"])


def test_the_token_signs_in_to_set_up_the_first_account_and_then_no_more(
    server: ServerProcess, tab: Browser
) -> None:
    tab.open(f"{server.url}/web/login")  # the token form, posted as a person does
    type_into(tab, "#token", server.token)
    tab.click("document.querySelector('form.login button')")
    tab.wait_for("Page.loadEventFired")
    assert tab.js("location.pathname") == "/web" and text_of(tab, "#projects") is not None
    token_cookie = session_cookie(tab, server)
    tab.open(f"{server.url}/web/setup")
    type_into(tab, "#name", ADMIN)
    type_into(tab, "#password", ADMIN_PASSWORD)
    type_into(tab, "#again", "a different one")
    tab.click("document.querySelector('#create')")
    tab.wait_for("Page.loadEventFired")
    assert text_of(tab, "#setup-error") == "the two passwords differ"
    type_into(tab, "#password", ADMIN_PASSWORD)
    type_into(tab, "#again", ADMIN_PASSWORD)
    tab.click("document.querySelector('#create')")
    tab.wait_for("Page.loadEventFired")
    assert tab.js("location.pathname") == "/web"  # signed in as the new admin
    assert session_cookie(tab, server) not in (None, token_cookie)

    stale = httpx.get(server.url + "/web", cookies={COOKIE_NAME: str(token_cookie)}, timeout=10)
    assert stale.status_code == 303  # the token's cookie is retired
    tab.open(f"{server.url}/web/setup")
    assert tab.js("location.pathname") == "/web/setup" and "first account exists" in str(
        text_of(tab, "main")
    )
    tab.open(f"{server.url}/web/login?{urlencode({'token': server.token})}")
    assert "no longer signs in here" in (text_of(tab, "#login-error") or "")
    assert tab.js("!!document.querySelector('#name') && !document.querySelector('#token')")


def test_a_password_signs_in_and_a_wrong_one_shows_an_error(
    server: ServerProcess, admin: str, tab: Browser
) -> None:
    tab.open(f"{server.url}/web/health")
    assert tab.js("location.pathname") == "/web/login"
    type_into(tab, "#name", ADMIN)
    type_into(tab, "#password", "not-the-password")
    tab.click("document.querySelector('#sign-in')")
    tab.wait_for("Page.loadEventFired")
    assert text_of(tab, "#login-error") == "That user name and password do not match."
    assert session_cookie(tab, server) is None
    sign_in(tab, server, ADMIN, ADMIN_PASSWORD)
    assert tab.js("location.pathname") == "/web" and text_of(tab, "#projects") is not None


class ForeignPage(BaseHTTPRequestHandler):
    """A page on another origin holding a copy of the approve form, token and all."""

    body = b""
    timeout = 2  # a socket the browser opened ahead and never used holds nothing up

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def foreign() -> Iterator[tuple[ThreadingHTTPServer, type[ForeignPage]]]:
    handler = type("Page", (ForeignPage,), {})
    site = ThreadingHTTPServer(("127.0.0.1", 0), handler)  # threads are daemons: none waits
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield site, handler
    finally:
        site.shutdown()
        site.server_close()


def test_a_forged_post_is_refused_and_changes_nothing(
    server: ServerProcess,
    admin: str,
    tab: Browser,
    foreign: tuple[ThreadingHTTPServer, type[ForeignPage]],
) -> None:
    sign_in(tab, server, ADMIN, ADMIN_PASSWORD)
    tab.open(f"{server.url}/web/pending-writes")
    action = tab.js("document.querySelector('form[action$=\"/approve\"]').action")
    csrf = tab.js("document.querySelector('form[action$=\"/approve\"] input[name=csrf]').value")

    site, handler = foreign
    handler.body = (
        f'<form method="post" action="{action}"><input type="hidden" name="csrf" '
        f'value="{csrf}"><button id="go">win a prize</button></form>'
    ).encode()
    tab.open(f"http://127.0.0.1:{site.server_address[1]}/")
    tab.click("document.querySelector('#go')")
    tab.wait_for("Page.loadEventFired")
    assert "not this server's own origin" in (text_of(tab, "body") or "")
    assert pending_state(server) == "pending"

    tab.open(f"{server.url}/web/pending-writes")  # this page, but a form token not its own
    tab.js("document.querySelector('form[action$=\"/approve\"] input[name=csrf]').value = 'x'")
    tab.click("document.querySelector('button.approve')")
    tab.wait_for("Page.loadEventFired")
    assert "did not come from this page" in (text_of(tab, "main") or "")
    assert pending_state(server) == "pending"

    tab.open(f"{server.url}/web/pending-writes")  # and the real form does what it says
    tab.click("document.querySelector('button.approve')")
    tab.wait_for("Page.loadEventFired")
    assert "applied" in (text_of(tab, "#notice") or "")
    assert pending_state(server) == "applied"
    tab.open(f"{server.url}/web/pending-writes?state=applied")
    assert f"applied by {ADMIN}" in (text_of(tab, "article.pending-write .meta") or "")


def test_sign_out_ends_the_session(server: ServerProcess, admin: str, tab: Browser) -> None:
    sign_in(tab, server, ADMIN, ADMIN_PASSWORD)
    value = session_cookie(tab, server)
    assert value is not None
    tab.click("document.querySelector('a.logout')")
    tab.wait_for("Page.loadEventFired")
    tab.click("document.querySelector('#sign-out-button')")
    tab.wait_for("Page.loadEventFired")
    assert tab.js("location.pathname") == "/web/login"
    assert session_cookie(tab, server) is None
    stale = httpx.get(server.url + "/web", cookies={COOKIE_NAME: value}, timeout=10)
    assert stale.status_code == 303 and stale.headers["location"].startswith("/web/login")


def test_repeated_failures_are_rate_limited(
    server: ServerProcess, admin: str, tab: Browser
) -> None:
    make_user(server, "pat")
    set_password(server, "pat", "pats-password-1")
    for _ in range(5):
        sign_in(tab, server, "pat", "a-wrong-guess")
        assert text_of(tab, "#login-error") == "That user name and password do not match."
    sign_in(tab, server, "pat", "pats-password-1")
    assert "Too many failed sign-ins" in (text_of(tab, "#login-error") or "")
    assert session_cookie(tab, server) is None
