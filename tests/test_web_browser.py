"""The web UI in a real headless Chromium: sign-in by link, pages, search, inert page text.

``make test`` installs Debian's ``chromium`` when it is missing; on a machine
where that is impossible these tests skip and say why.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from pathlib import Path
from urllib.parse import urlencode

import pytest

from tests.cdp_support import Browser
from tests.conftest import ServerProcess

CHROMIUM = next(
    (found for name in ("chromium", "chromium-browser") if (found := shutil.which(name))), None
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (make test installs it with apt-get)"
)
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
)


def run_chromium(url: str, profile: Path) -> subprocess.CompletedProcess[bytes]:
    assert CHROMIUM is not None
    return subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--dump-dom", url],
        capture_output=True,
        timeout=60,
        check=False,
    )


@pytest.fixture(scope="module", autouse=True)
def chromium_works(tmp_path_factory: pytest.TempPathFactory) -> None:
    """A chromium that cannot start on this machine is the machine's problem: skip."""
    probe = run_chromium("data:text/html,<p>ready</p>", tmp_path_factory.mktemp("probe"))
    if probe.returncode != 0 or b"<p>ready</p>" not in probe.stdout:
        tail = probe.stderr.decode(errors="replace")[-300:]
        pytest.skip(f"chromium is installed but cannot render a page here: {tail}")


def dump_dom(url: str, profile: Path) -> str:
    """The DOM after the page (and any redirects) loaded, as Chromium serialises it."""
    done = run_chromium(url, profile)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-2000:]
    return done.stdout.decode()


def signed_in(server: ServerProcess, tmp_path: Path, next_: str | None = None) -> str:
    """Open the sign-in link (token in the query) and return the page it lands on."""
    query = {"token": server.token, **({"next": next_} if next_ else {})}
    return dump_dom(f"{server.url}/web/login?{urlencode(query)}", tmp_path / "profile")


def test_the_sign_in_link_lands_on_the_projects(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path)
    assert 'id="projects"' in dom
    assert 'href="/web/default/api"' in dom and 'href="/web/default/web"' in dom
    assert 'href="/web/default/api/page/decisions/db.md"' in dom
    assert "1 open handoffs" in dom


def test_without_signing_in_the_browser_gets_the_form(
    web_server: ServerProcess, tmp_path: Path
) -> None:
    dom = dump_dom(f"{web_server.url}/web/default/api/page/decisions/db.md", tmp_path / "p")
    assert 'name="token"' in dom and 'name="next"' in dom
    assert 'value="/web/default/api/page/decisions/db.md"' in dom
    assert "We chose SQLite" not in dom


def test_untrusted_page_text_stays_inert_in_the_browser(
    web_server: ServerProcess, tmp_path: Path
) -> None:
    dom = signed_in(web_server, tmp_path, "/web/default/api/page/notes/evil.md")
    assert 'id="page-title"' in dom
    body_tag = re.search(r"<body[^>]*>", dom)
    assert body_tag is not None and "data-pwned" not in body_tag.group(0)
    assert "<script" not in dom.lower()
    assert not re.search(r"<a [^>]*href=\"javascript:", dom, re.IGNORECASE)
    assert "&lt;script&gt;alert('title')&lt;/script&gt;</h1>" in dom
    assert 'href="/web/default/api/page/concepts/wal.md"' in dom


def test_search_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/search?q=readers+writer")
    hits = dom.split('id="hits"')[1].split("</ol>")[0]
    assert 'href="/web/default/api/page/concepts/wal.md"' in hits


def test_health_page_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/health")
    assert 'id="health-facts"' in dom and 'id="all-well"' in dom
    assert str(web_server.data_dir.resolve()) in dom


def test_sessions_timeline_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/sessions")
    timeline = dom.split('id="timeline"')[1].split("</ol>")[0]
    assert 'href="/web/default/api/session/s-1"' in timeline and "fix the cart" in timeline


def test_session_view_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/default/api/session/s-1")
    conversation = dom.split('id="conversation"')[1].split("</ol>")[0]
    assert '<li class="prompt">' in conversation
    assert '<li class="tool failed">' in conversation and "failed (exit 1)" in conversation
    assert "Fixed the cart" in conversation


def test_tree_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/default/api/tree")
    assert '<span class="folder-name">decisions/</span>' in dom
    assert 'href="/web/default/api/page/decisions/db.md"' in dom


def test_diff_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/default/api/diff/concepts/wal.md")
    diff = dom.split('id="diff"')[1].split("</pre>")[0]
    assert '<span class="del">-WAL lets readers proceed while one writer commits.</span>' in diff
    assert (
        '<span class="add">+WAL lets readers proceed while the single writer commits.</span>'
        in diff
    )


def test_graph_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    dom = signed_in(web_server, tmp_path, "/web/default/api/graph")
    svg = dom.split('<svg id="graph"')[1].split("</svg>")[0]
    assert "<circle" in svg and "<line" in svg
    assert 'href="/web/default/api/page/concepts/wal.md"' in svg


def test_explain_toggle_in_the_browser(web_server: ServerProcess, tmp_path: Path) -> None:
    plain = signed_in(web_server, tmp_path, "/web/search?q=SQLite+wal&project=api")
    assert "why this result" not in plain and "<mark>SQLite</mark>" in plain
    explained = signed_in(web_server, tmp_path, "/web/search?q=SQLite+wal&project=api&explain=1")
    toggles = re.findall(r"<details class=\"explain\"[^>]*>", explained)
    assert toggles and all(" open" not in tag for tag in toggles)  # closed until asked for


SESSION_HIT = (
    "[...document.querySelectorAll('ol#hits > li')].find(li => li.querySelector('a.hit-title')"
    ".getAttribute('href').endsWith('/sessions/s-9.md')).querySelector('details.explain')"
)
QUERY_EXPLAIN = "document.querySelector('#query-explain')"


def shown(tab: Browser, element: str) -> bool:
    """Whether ``element`` is rendered on screen with a size (not inside a closed toggle)."""
    return bool(
        tab.js(
            f"(() => {{ const e = {element}; return e.checkVisibility() && "
            "e.getBoundingClientRect().height > 0; })()"
        )
    )


def test_clicking_the_explain_toggle_shows_the_trace(server: ServerProcess, tmp_path: Path) -> None:
    """A person clicks "why this result" and sees the streams' ranks, contributions and the
    turns that voted; the query's own toggle opens from the keyboard."""
    assert CHROMIUM is not None
    write_a_finished_session(server)
    address = "/web/search?" + urlencode(
        {"q": "rounding the cart total", "project": "shop", "explain": "1"}
    )
    with Browser(CHROMIUM, tmp_path / "cdp", FLAGS) as tab:
        tab.open(f"{server.url}/web/login?{urlencode({'token': server.token, 'next': address})}")
        assert tab.js("location.pathname") == "/web/search"
        trace = f"{SESSION_HIT}.querySelector('table')"
        assert tab.js(f"{SESSION_HIT}.open") is False and not shown(tab, trace)

        tab.click(f"{SESSION_HIT}.querySelector('summary')")

        assert tab.js(f"{SESSION_HIT}.open") is True and shown(tab, trace)
        rows = tab.js(
            f"[...{trace}.querySelectorAll('tbody tr')].map(r => r.innerText.split('\\t'))"
        )
        streams = {row[0]: row for row in rows}
        # The page's words and its session's turns (evidence), fused as one session stream.
        assert {"fts", "evidence", "session"} <= set(streams), rows
        for row in rows:  # rank, raw score, contribution: numbers a person can read
            assert row[1].isdigit() and float(row[2]) == float(row[2]) and float(row[3]) >= 0
        assert float(streams["session"][3]) > 0
        seen = tab.js(f"{SESSION_HIT}.innerText")
        turns = re.search(r"turns that voted: ([\d, ]+)", seen)
        assert turns is not None, seen
        assert tab.js(f"{SESSION_HIT}.querySelector('p').checkVisibility()") is True

        assert not shown(tab, f"{QUERY_EXPLAIN}.querySelector('table')")
        tab.tab_to(f"{QUERY_EXPLAIN}.querySelector('summary')")
        tab.press_enter()
        assert tab.js(f"{QUERY_EXPLAIN}.open") is True
        assert shown(tab, f"{QUERY_EXPLAIN}.querySelector('table')")
        assert "fts" in tab.js(f"{QUERY_EXPLAIN}.innerText")


def write_a_finished_session(server: ServerProcess) -> None:
    """A decision and a session that ended (so it has its page) about the same thing."""
    hook = {"workspace": "default", "project": "shop", "agent": "claude-code", "session_id": "s-9"}
    events = [
        {"hook_event_name": "UserPromptSubmit", "prompt": "the cart total is off by a cent"},
        {"hook_event_name": "Stop", "last_assistant_message": "Fixed rounding the cart total."},
        {"hook_event_name": "SessionEnd", "reason": "exit"},
    ]
    page = {"body": "Round the cart total to cents once, at checkout.", "title": "Rounding"}
    with server.client() as client:
        for event in events:
            assert client.post("/hook", params=hook, json=event).status_code == 202
        client.put("/api/v1/projects/default/shop/pages/decisions/rounding.md", json=page)
        deadline = time.monotonic() + 30
        session_page = "/api/v1/projects/default/shop/pages/sessions/s-9.md"
        while client.get(session_page).status_code != 200:  # written after the 202
            assert time.monotonic() < deadline, "the session page was never written"
            time.sleep(0.1)
