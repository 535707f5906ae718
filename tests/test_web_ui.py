"""The read-only browser UI over HTTP: sign-in, the cookie's reach, pages, search, safety."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from html.parser import HTMLParser
from urllib.parse import quote

import httpx
import pytest

from ai_memory.core.identity import Scope
from ai_memory.web.markdown import build_renderer, render
from ai_memory.web.webauth import COOKIE_NAME, cookie_for, safe_next
from tests.conftest import ServerProcess

WAL = "/web/default/api/page/concepts/wal.md"
DB = "/web/default/api/page/decisions/db.md"
EVIL = "/web/default/api/page/notes/evil.md"


class Tags(HTMLParser):
    """Every start tag with its attributes, to check what markup a response really holds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def tags_of(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = Tags()
    parser.feed(html)
    return parser.tags


def hrefs(html: str) -> list[str]:
    return [a["href"] or "" for tag, a in tags_of(html) if tag == "a" and "href" in a]


@contextmanager
def browser(server: ServerProcess) -> Iterator[httpx.Client]:
    """A client that signs in like a browser: the token once, then only the cookie."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        signed = client.get("/web/login", params={"token": server.token})
        assert signed.status_code == 303
        yield client


def test_web_pages_send_a_browser_without_the_cookie_to_sign_in(web_server: ServerProcess) -> None:
    for path in ("/web", "/web/default/api?kind=decision", DB, "/web/search?q=wal"):
        answer = httpx.get(web_server.url + path, timeout=10)
        assert answer.status_code == 303, path
        assert answer.headers["location"] == "/web/login?next=" + quote(path, safe="")
    login = httpx.get(web_server.url + "/web", follow_redirects=True, timeout=10)
    assert login.status_code == 200 and 'name="token"' in login.text
    assert "Use SQLite" not in login.text and "concepts/wal.md" not in login.text
    forged = httpx.get(web_server.url + "/web", cookies={COOKIE_NAME: web_server.token}, timeout=10)
    assert forged.status_code == 303  # the token itself is not the cookie


def test_sign_in_sets_a_strict_http_only_cookie_that_is_not_the_token(
    web_server: ServerProcess,
) -> None:
    answer = httpx.get(
        web_server.url + "/web/login",
        params={"token": web_server.token, "next": "/web/default/api?kind=decision"},
        timeout=10,
    )
    assert answer.status_code == 303
    assert answer.headers["location"] == "/web/default/api?kind=decision"
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}={cookie_for(web_server.token)};")
    assert web_server.token not in cookie
    attributes = {part.strip().lower() for part in cookie.split(";")}
    assert {"httponly", "path=/web", "samesite=strict"} <= attributes
    wrong = httpx.get(web_server.url + "/web/login", params={"token": "nope"}, timeout=10)
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers
    assert "not valid" in wrong.text


def test_the_sign_in_form_posts_the_token(web_server: ServerProcess) -> None:
    url = web_server.url + "/web/login"
    good = httpx.post(url, data={"token": web_server.token, "next": DB}, timeout=10)
    assert good.status_code == 303 and good.headers["location"] == DB
    assert cookie_for(web_server.token) in good.headers["set-cookie"]
    empty = httpx.post(url, data={"token": "  "}, timeout=10)
    wrong = httpx.post(url, data={"token": "nope"}, timeout=10)
    assert empty.status_code == 400 and "set-cookie" not in empty.headers
    assert wrong.status_code == 401 and "set-cookie" not in wrong.headers


@pytest.mark.parametrize(
    "target",
    [
        "https://evil.example/web",
        "//evil.example/web",
        "/\\evil.example",
        "\\\\evil.example",
        "/api/v1/status",
        "/web/../api/v1/status",
        "/web/%2e%2e/api/v1/status",
        "javascript:alert(1)",
        "/web/login",
        "/webx",
        "/web\r\nSet-Cookie: x=1",
    ],
)
def test_sign_in_never_redirects_off_the_ui(web_server: ServerProcess, target: str) -> None:
    assert safe_next(target) == "/web"
    answer = httpx.get(
        web_server.url + "/web/login",
        params={"token": web_server.token, "next": target},
        timeout=10,
    )
    assert answer.status_code == 303 and answer.headers["location"] == "/web"


def test_the_cookie_opens_read_only_web_pages_and_nothing_else(web_server: ServerProcess) -> None:
    value = cookie_for(web_server.token)
    header = {"Cookie": f"{COOKIE_NAME}={value}"}
    assert httpx.get(web_server.url + "/web", headers=header, timeout=10).status_code == 200
    for method, path in [
        ("GET", "/api/v1/status"),
        ("GET", "/api/v1/projects/default/api/pages/decisions/db.md"),
        ("GET", "/api/v1/search?q=wal&global=true"),
        ("POST", "/hook?project=api&agent=x&session_id=s"),
        ("GET", "/handoff?project=api"),
        ("POST", "/mcp"),
        ("POST", "/web"),
        ("PUT", DB),
        ("DELETE", DB),
    ]:
        answer = httpx.request(method, web_server.url + path, headers=header, timeout=10)
        assert answer.status_code == 401, (method, path, answer.status_code)
        assert answer.json()["error"] == "unauthorized"


def test_home_lists_projects_recent_pages_and_open_handoffs(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        home = client.get("/web")
    assert home.status_code == 200 and home.headers["content-type"].startswith("text/html")
    links = hrefs(home.text)
    assert {"/web/default/api", "/web/default/web"} <= set(links)
    assert {WAL, DB, EVIL, "/web/default/web/page/procedures/release.md"} <= set(links)
    assert "1 open handoffs" in home.text
    assert 'action="/web/search"' in home.text
    assert "default-src 'none'" in home.headers["content-security-policy"]


def test_project_page_filters_by_kind_and_shows_sessions_and_handoffs(
    web_server: ServerProcess,
) -> None:
    with browser(web_server) as client:
        everything = client.get("/web/default/api")
        decisions = client.get("/web/default/api", params={"kind": "decision"})
        bad_kind = client.get("/web/default/api", params={"kind": "nonsense"})
        missing = client.get("/web/default/nope")
    assert {WAL, DB, EVIL} <= set(hrefs(everything.text))
    assert "/web/default/api/session/s-1" in hrefs(everything.text)
    assert ">fix the cart</a>" in everything.text and "claude-code" in everything.text
    assert "finish the &lt;b&gt;cart&lt;/b&gt; page" in everything.text
    assert DB in hrefs(decisions.text)
    assert WAL not in hrefs(decisions.text) and EVIL not in hrefs(decisions.text)
    assert bad_kind.status_code == 400 and "kind must be one of" in bad_kind.text
    assert missing.status_code == 404 and "no project default/nope" in missing.text


def test_a_page_shows_its_metadata_links_backlinks_and_history(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        db = client.get(DB)
        wal = client.get(WAL)
        old = client.get(WAL, params={"version": "1"})
    assert db.status_code == 200
    assert '<h1 id="page-title">Use SQLite</h1>' in db.text
    assert "pinned" in db.text and "#storage" in db.text and "<th>title</th>" in db.text
    assert "We chose SQLite" in db.text
    body_links = [
        a for tag, a in tags_of(db.text) if tag == "a" and "wikilink" in (a.get("class") or "")
    ]
    assert [(a["href"], a["class"]) for a in body_links] == [
        (WAL, "wikilink"),
        ("/web/default/api/page/gotchas/later.md", "wikilink unresolved"),
    ]
    links_section = db.text.split('id="links"')[1].split("</section>")[0]
    assert WAL in hrefs(links_section)
    assert "/web/default/api/page/gotchas/later.md" not in hrefs(links_section)
    assert "gotchas/later.md" in links_section and "not written yet" in links_section
    backlinks = wal.text.split('id="backlinks"')[1].split("</section>")[0]
    assert {DB, EVIL} <= set(hrefs(backlinks))
    assert f"{WAL}?version=1" in hrefs(wal.text) and f"{WAL}?version=2" in hrefs(wal.text)
    assert "the single writer" in wal.text and 'id="old-version"' not in wal.text
    assert "one writer commits" in old.text and 'id="old-version"' in old.text


def test_untrusted_page_text_renders_inert(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        page = client.get(EVIL)
    assert page.status_code == 200
    tags = tags_of(page.text)
    assert "script" not in {tag for tag, _ in tags}
    assert not [attrs for _, attrs in tags if any(name.startswith("on") for name in attrs)]
    assert not [h for h in hrefs(page.text) if "script:" in h.lower()]
    assert "&lt;script&gt;alert(&#39;title&#39;)&lt;/script&gt;" in page.text
    assert "&lt;img src=&quot;x&quot; onerror=" in page.text
    assert WAL in hrefs(page.text.split('id="body"')[1])
    assert "script-src" not in page.headers["content-security-policy"]  # default-src 'none'


def test_missing_pages_and_bad_addresses_answer_html_errors(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        missing = client.get("/web/default/api/page/nope.md")
        no_version = client.get(WAL, params={"version": "9"})
        bad_version = client.get(WAL, params={"version": "x"})
        climbing = client.get("/web/default/api/page/..%2Fsecret.md")
        unknown = client.get("/web/a/b/c/d")
    for answer, status in [
        (missing, 404),
        (no_version, 404),
        (bad_version, 400),
        (climbing, 400),
        (unknown, 404),
    ]:
        assert answer.status_code == status, answer.url
        assert answer.headers["content-type"].startswith("text/html")
        assert 'id="error-message"' in answer.text


def test_search_answers_what_the_api_search_answers(web_server: ServerProcess) -> None:
    with browser(web_server) as client, web_server.client() as api:
        everywhere = client.get("/web/search", params={"q": "readers writer"})
        scoped = client.get("/web/search", params={"q": "release", "project": "web"})
        expected = api.get("/api/v1/search", params={"q": "readers writer", "global": "true"})
        bad = client.get("/web/search", params={"q": "x", "project": "no/such"})
        empty = client.get("/web/search")
    paths = hrefs(everywhere.text.split('id="hits"')[1].split("</ol>")[0])
    api_paths = [f"/web/default/{h['project']}/page/{h['path']}" for h in expected.json()["hits"]]
    assert paths == api_paths and WAL in paths
    assert "/web/default/web/page/procedures/release.md" in hrefs(scoped.text)
    assert "in default/web" in scoped.text.split('id="scope"')[1].split("</p>")[0]
    assert bad.status_code == 400 and 'id="search-error"' in bad.text
    assert empty.status_code == 200 and 'id="hits"' not in empty.text


def test_head_answers_like_get_without_a_body(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        head = client.head(DB)
        slash = client.get("/web/")
    assert head.status_code == 200 and head.content == b""
    assert head.headers["content-type"].startswith("text/html")
    assert slash.status_code == 308 and slash.headers["location"] == "/web"


def test_sign_out_drops_the_cookie(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        out = client.get("/web/logout")
        assert out.status_code == 303 and out.headers["location"] == "/web/login"
        assert client.get("/web").status_code == 303


def test_markdown_links_point_at_the_ui_and_unsafe_links_stay_text() -> None:
    source = Scope.of("default", "api").page("notes/a.md")
    html = render(
        build_renderer(),
        "[[other:x.md|X]] [b](./b.md) [c](c.md) [d](data:text/html,hi) [e](vbscript:x) "
        "`[[code.md]]` <b>bold</b>",
        source,
        frozenset({("default", "api", "c.md")}),
    )
    assert hrefs(html) == [
        "/web/default/other/page/x.md",
        "/web/default/api/page/notes/b.md",
        "/web/default/api/page/c.md",
    ]
    assert 'class="unresolved"' in html and "<code>[[code.md]]</code>" in html
    assert "&lt;b&gt;bold&lt;/b&gt;" in html


def test_serve_prints_the_ui_and_sign_in_addresses_but_never_the_token(
    web_server: ServerProcess,
) -> None:
    printed = (web_server.data_dir / "test-server.log").read_text()
    assert f"web UI:   {web_server.url}/web\n" in printed
    assert f"sign in:  {web_server.url}/web/login (token file below)\n" in printed
    assert "token:    " in printed  # where the token file is; the path may wrap
    assert web_server.token not in printed


def test_a_deleted_page_shows_its_last_version_and_history(web_server: ServerProcess) -> None:
    api_path = "/api/v1/projects/default/api/pages/notes/gone.md"
    with web_server.client() as api:
        api.put(api_path, json={"body": "soon gone"}).raise_for_status()
        api.delete(api_path).raise_for_status()
    with browser(web_server) as client:
        page = client.get("/web/default/api/page/notes/gone.md")
        listing = client.get("/web/default/api")
    assert page.status_code == 200 and "soon gone" in page.text
    notice = page.text.split('id="old-version"')[1].split("</p>")[0]
    assert "deleted" in notice
    assert "/web/default/api/page/notes/gone.md" not in hrefs(listing.text)


# -- operator pages: health, sessions, tree, diff, graph, handoffs, search filters ----------


def local_only(html: str) -> None:
    """No page loads or links anything off this server (no external assets)."""
    for tag, attrs in tags_of(html):
        for name in ("src", "href", "action"):
            value = attrs.get(name)
            if value is not None:
                assert value.startswith(("/", "?", "#")), (tag, name, value)


def test_health_page_shows_the_status_read_only(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        page = client.get("/web/health")
    assert page.status_code == 200
    assert str(web_server.data_dir.resolve()) in page.text
    assert 'id="all-well"' in page.text and "writer queue" in page.text
    wait = page.text.split('id="writer-wait">')[1].split("</dd>")[0]
    assert wait.endswith(" ms") and float(wait.removesuffix(" ms")) >= 0  # the seeded writes
    assert 'href="/web/default/api"' in page.text
    assert "<form" not in page.text.split("<main>")[1]  # read-only: nothing to submit
    local_only(page.text)


def test_sessions_timeline_lists_titles_agents_durations_and_outcomes(
    web_server: ServerProcess,
) -> None:
    with browser(web_server) as client:
        everywhere = client.get("/web/sessions")
        project = client.get("/web/default/api/sessions")
        bad = client.get("/web/sessions", params={"before": "soon"})
    for page in (everywhere, project):
        assert page.status_code == 200
        assert ">fix the cart</a>" in page.text and "claude-code" in page.text
        assert "/web/default/api/session/s-1" in hrefs(page.text)
        assert '<span class="outcome failed">open, 1 failed call</span>' in page.text
        local_only(page.text)
    assert bad.status_code == 400 and "before must be a whole number" in bad.text


def test_session_view_reads_like_the_session(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        page = client.get("/web/default/api/session/s-1")
        missing = client.get("/web/default/api/session/nope")
    assert page.status_code == 200
    conversation = page.text.split('id="conversation"')[1]
    assert '<li class="prompt">' in conversation and "fix the cart" in conversation
    assert '<span class="tool-summary">pytest -q tests/test_cart.py</span>' in conversation
    assert '<span class="tool-outcome">failed (exit 1)</span>' in conversation
    assert '<span class="tool-summary">src/cart.py</span>' in conversation
    assert "Fixed the cart: the total now rounds." in conversation
    assert "&#34;command&#34;" not in conversation and "\\n" not in conversation
    assert "2 tool calls" in page.text and "1 failed" in page.text
    assert missing.status_code == 404 and "no session nope" in missing.text


def test_project_page_shows_handoff_next_steps_and_open_questions(
    web_server: ServerProcess,
) -> None:
    with browser(web_server) as client:
        page = client.get("/web/default/api")
    handoffs = page.text.split('id="handoffs"')[1].split("</section>")[0]
    assert "Next steps" in handoffs and "<li>wire the cart total</li>" in handoffs
    assert "Open questions" in handoffs and "<li>do we keep guest carts?</li>" in handoffs
    for view in ("tree", "graph", "sessions"):
        assert f"/web/default/api/{view}" in hrefs(page.text)


def test_tree_shows_folders_with_kinds_and_counts(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        page = client.get("/web/default/api/tree")
        missing = client.get("/web/default/nope/tree")
    assert page.status_code == 200
    tree = page.text.split('id="tree"')[1]
    for folder in ("concepts/", "decisions/", "notes/"):
        assert f'<span class="folder-name">{folder}</span>' in tree
    assert '<span class="badge">decision 1</span>' in tree
    assert {WAL, DB, EVIL} <= set(hrefs(tree))
    assert missing.status_code == 404
    local_only(page.text)


def test_history_diff_between_any_two_versions(web_server: ServerProcess) -> None:
    base = "/web/default/api/diff/concepts/wal.md"
    with browser(web_server) as client:
        default = client.get(base)
        reverse = client.get(base, params={"a": "2", "b": "1"})
        same = client.get(base, params={"a": "2", "b": "2"})
        bad = client.get(base, params={"a": "9"})
        history = client.get(WAL)
    assert default.status_code == 200
    diff = default.text.split('id="diff"')[1].split("</pre>")[0]
    assert '<span class="del">-WAL lets readers proceed while one writer commits.</span>' in diff
    assert (
        '<span class="add">+WAL lets readers proceed while the single writer commits.</span>'
        in diff
    )
    assert '<span class="del">-title: WAL</span>' in reverse.text
    assert '<span class="add">+title: wal</span>' in reverse.text
    assert 'id="no-diff"' in same.text
    assert bad.status_code == 400 and "has no version 9" in bad.text
    assert f"{base}?a=1&b=2" in hrefs(history.text)


def test_graph_api_and_page(web_server: ServerProcess) -> None:
    with web_server.client() as api:
        data = api.get("/api/v1/graph", params={"project": "api"}).json()
        missing = api.get("/api/v1/graph", params={"project": "nope"})
        bad = api.get("/api/v1/graph", params={"project": "api", "limit": "0"})
    assert httpx.get(f"{web_server.url}/api/v1/graph?project=api", timeout=10).status_code == 401
    paths = {n["path"] for n in data["nodes"]}
    assert {"decisions/db.md", "concepts/wal.md"} <= paths
    assert {"src": "decisions/db.md", "dst": "concepts/wal.md"} in data["edges"]
    assert data["total"] >= 3 and missing.status_code == 404 and bad.status_code == 422
    with browser(web_server) as client:
        page = client.get("/web/default/api/graph")
        too_many = client.get("/web/default/api/graph", params={"limit": "5000"})
    svg = page.text.split('<svg id="graph"')[1].split("</svg>")[0]
    assert svg.count("<circle") == len(data["nodes"]) and svg.count("<line") == len(data["edges"])
    assert 'href="/web/default/api/page/decisions/db.md"' in svg
    assert too_many.status_code == 400
    local_only(page.text)


def test_search_filters_highlights_and_explains(web_server: ServerProcess) -> None:
    with browser(web_server) as client:
        plain_hits = client.get("/web/search", params={"q": "SQLite wal", "project": "api"})
        decisions = client.get(
            "/web/search", params={"q": "SQLite wal", "project": "api", "kind": "decision"}
        )
        by_path = client.get(
            "/web/search", params={"q": "readers wal", "project": "api", "path": "concepts/"}
        )
        explained = client.get(
            "/web/search", params={"q": "SQLite wal", "project": "api", "explain": "1"}
        )
        bad_kind = client.get("/web/search", params={"q": "wal", "kind": "nonsense"})
    hits = plain_hits.text.split('id="hits"')[1].split("</ol>")[0]
    assert "<mark>SQLite</mark>" in hits
    assert "[[" not in hits and "]]" not in hits  # link syntax shown as text
    assert 'id="query-explain"' not in plain_hits.text and "why this result" not in hits
    decision_hits = hrefs(decisions.text.split('id="hits"')[1].split("</ol>")[0])
    assert DB in decision_hits and WAL not in decision_hits
    path_hits = hrefs(by_path.text.split('id="hits"')[1].split("</ol>")[0])
    assert WAL in path_hits and DB not in path_hits
    assert "<option selected>decision</option>" in decisions.text
    assert (
        'id="query-explain"' in explained.text
        and "<summary>why this result</summary>" in explained.text
    )
    assert "<td>fts</td>" in explained.text and "contribution" in explained.text
    assert bad_kind.status_code == 400


def test_home_and_project_pages_count_what_they_hold(server: ServerProcess) -> None:
    pages = "/api/v1/projects/default/counted/pages"
    with server.client() as client:
        for path, body in (("a.md", "one"), ("a.md", "two"), ("b.md", "three")):
            assert client.put(f"{pages}/{path}", json={"body": body}).is_success
        hook = {"project": "counted", "agent": "claude-code", "session_id": "s-1"}
        prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "count"}
        assert client.post("/hook", params=hook, json=prompt).status_code == 202
        handoff = {"project": "counted", "summary": "carry on", "next_steps": ["count"]}
        assert client.post("/api/v1/handoffs", json=handoff).is_success
        assert client.delete(f"{pages}/b.md").is_success  # gone from the counts, not history
    with browser(server) as ui:
        home = ui.get("/web").text
        project = ui.get("/web/default/counted").text
    stats = " ".join(home.split('id="stats">')[1].split("</p>")[0].split())
    assert stats.startswith("1 projects · 1 pages · 1 sessions ·") and "1 open handoffs" in stats
    assert "1 pages · 3 versions · 1 sessions · 1 open handoffs" in project
