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
    assert "s-1<" in everything.text and "claude-code" in everything.text
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
