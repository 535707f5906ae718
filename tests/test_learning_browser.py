"""The pending-writes queue in a real headless Chromium: the list, each diff, approve by
a mouse click and reject from the keyboard; both are real form posts with the CSRF token.

Skips, saying why, where Chromium is missing or cannot start (see test_web_browser).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.cdp_support import Browser
from tests.conftest import ServerProcess, clean_env
from tests.fake_llm import FakeLlm
from tests.learning_support import finish_session, improve, llm_env, page_url, review
from tests.test_web_browser import CHROMIUM, FLAGS, chromium_works, shown

__all__ = ["chromium_works"]
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
RULE = "_rules/rounding.md"
PROCEDURE = "procedures/release.md"


@pytest.fixture
def queued(tmp_path: Path) -> Iterator[tuple[ServerProcess, list[int]]]:
    with FakeLlm() as fake:
        root = tmp_path / "data"
        initialise(Config.load(root, {}))
        server = ServerProcess(root, env=clean_env(**llm_env(fake))).start()
        try:
            with server.client() as client:
                finish_session(client, "shop", "s-1", "the cart total is off by a cent")
                fake.push(
                    review(
                        (RULE, "# Rounding\n\nRound money to cents once, at checkout."),
                        (PROCEDURE, "1. Tag the release.\n2. Push the tag."),
                    )
                )
                ids = [p["id"] for p in improve(client, "shop").json()["proposals"]]
            yield server, ids
        finally:
            server.stop()


def test_the_queue_in_the_browser(queued: tuple[ServerProcess, list[int]], tmp_path: Path) -> None:
    assert CHROMIUM is not None
    server, (rule_id, procedure_id) = queued
    login = {"token": server.token, "next": "/web/pending-writes"}
    with Browser(CHROMIUM, tmp_path / "cdp", FLAGS) as tab:
        tab.call(
            "Emulation.setDeviceMetricsOverride",
            width=420,
            height=900,
            deviceScaleFactor=1,
            mobile=False,
        )
        tab.open(f"{server.url}/web/login?{urlencode(login)}")
        assert tab.js("location.pathname") == "/web/pending-writes"
        cards = tab.js("[...document.querySelectorAll('article.pending-write')].map(a => a.id)")
        assert sorted(cards) == sorted([f"pw-{rule_id}", f"pw-{procedure_id}"])
        added = tab.js(
            f"document.querySelector('#pw-{rule_id} pre.diff .add:last-child').innerText"
        )
        assert "+Round money to cents once, at checkout." in added
        assert shown(tab, f"document.querySelector('#pw-{rule_id} pre.diff')")
        # Narrow window: nothing is wider than the viewport.
        assert tab.js("document.documentElement.scrollWidth <= window.innerWidth")

        tab.click(f"document.querySelector('#approve-{rule_id}')")
        tab.wait_for("Page.loadEventFired")
        assert tab.js("document.querySelector('#notice').innerText") == (
            f"#{rule_id} {RULE}: applied."
        )
        assert tab.js(f"document.querySelector('#pw-{rule_id}')") is None

        reject = f"document.querySelector('#reject-{procedure_id}')"
        tab.tab_to(reject)
        tab.press_enter()
        tab.wait_for("Page.loadEventFired")
        assert "rejected" in tab.js("document.querySelector('#notice').innerText")
        assert tab.js("document.querySelector('#empty').innerText") == (
            "Nothing waits for a decision."
        )
    with server.client() as client:
        assert "Round money to cents once" in client.get(page_url("shop", RULE)).json()["body"]
        assert client.get(page_url("shop", PROCEDURE)).status_code == 404
