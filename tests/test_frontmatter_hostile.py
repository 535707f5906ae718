"""Hostile frontmatter through every door: HTTP, MCP, the CLI, and files on disk.

Each refused write must leave the page that was there before exactly as it was.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from ai_memory.wiki.bounded_yaml import MAX_ALIASES
from ai_memory.wiki.limits import LIST_CAPS, MAX_FRONTMATTER_BYTES, TEXT_CHARS
from tests.conftest import ServerProcess, run_cli
from tests.mcp_support import connect, module_server

PAGES = "/api/v1/projects/default/{project}/pages"
SELF_REFERENCE = "---\na: &a [*a]\n---\nbody\n"  # the 24-byte file of the report


def alias_bomb(levels: int = 6, width: int = 9) -> str:
    """The 307-byte bomb of the report: 6 levels of 9 aliases, 9**6 strings once expanded."""
    lines = ["a0: &a0 [" + ",".join(['"lol"'] * width) + "]"]
    for level in range(1, levels):
        lines.append(f"a{level}: &a{level} [" + ",".join([f"*a{level - 1}"] * width) + "]")
    return "---\n" + "\n".join(lines) + "\n---\nbody\n"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def http(srv: ServerProcess) -> Iterator[httpx.Client]:
    with srv.client() as client:
        yield client


class Page:
    """A page written before the hostile write, to compare against after it."""

    def __init__(self, srv: ServerProcess, http: httpx.Client, project: str, path: str) -> None:
        self.url = f"{PAGES.format(project=project)}/{path}"
        self.file = srv.data_dir / "wiki" / "default" / project / path
        written = http.put(self.url, json={"body": "# Kept\n\nthe original text", "tags": ["t"]})
        assert written.status_code == 200, written.text
        self.before = http.get(self.url).json()
        self.bytes = self.file.read_bytes()

    def unchanged(self, http: httpx.Client) -> None:
        after = http.get(self.url).json()
        assert after["page_id"] == self.before["page_id"]
        assert after["body"] == self.before["body"]
        assert after["frontmatter"] == self.before["frontmatter"]
        assert self.file.read_bytes() == self.bytes
        history = http.get(self.url.replace("/pages/", "/history/")).json()
        assert len(history["versions"]) == 1


def refused(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    answer: dict[str, Any] = response.json()
    for word in words:
        assert word in answer["message"], answer
    return answer


# -- HTTP ---------------------------------------------------------------------------------


def test_the_alias_bomb_is_refused_and_writes_nothing(
    srv: ServerProcess, http: httpx.Client
) -> None:
    assert len(alias_bomb().encode()) == 307
    page = Page(srv, http, "bomb", "notes/a.md")
    answer = refused(http.put(page.url, json={"body": alias_bomb()}), 400, "more than 10000")
    assert answer["error"] == "invalid_frontmatter"
    page.unchanged(http)


@pytest.mark.parametrize(
    ("block", "problem"),
    [
        ("a: &a [*a]", "&a refers to itself"),
        ("a: &a {b: *a}", "&a refers to itself"),
        ("a: " + "[" * 200 + "]" * 200, "nested more than 20 levels"),
        ("x: &x y\n" + "\n".join(f"k{i}: *x" for i in range(MAX_ALIASES + 1)), "aliases"),
        ("big: " + "9" * 5000, "cannot be read"),
        ("s: &s " + "x" * 8000 + "\nl: [" + ",".join(["*s"] * 9) + "]", "characters of text"),
    ],
)
def test_hostile_yaml_is_a_named_400(
    srv: ServerProcess, http: httpx.Client, block: str, problem: str
) -> None:
    page = Page(srv, http, "yaml", "notes/a.md")
    answer = refused(http.put(page.url, json={"body": f"---\n{block}\n---\nbody\n"}), 400, problem)
    assert answer["error"] == "invalid_frontmatter"
    page.unchanged(http)


def test_anchors_and_merge_keys_within_bounds_still_work(http: httpx.Client) -> None:
    body = "---\nbase: &b {owner: ops, tier: 1}\nlocal: {<<: *b, tier: 2}\nalso: *b\n---\nText\n"
    url = f"{PAGES.format(project='anchors')}/notes/a.md"
    assert http.put(url, json={"body": body}).status_code == 200
    frontmatter = http.get(url).json()["frontmatter"]
    assert frontmatter["local"] == {"owner": "ops", "tier": 2}
    assert frontmatter["also"] == {"owner": "ops", "tier": 1}


def test_a_huge_summary_field_is_refused(srv: ServerProcess, http: httpx.Client) -> None:
    page = Page(srv, http, "summary", "notes/a.md")
    huge = {"body": "text", "summary": "s" * 3_500_000}
    response = http.put(page.url, json=huge)
    assert response.status_code in (400, 413, 422), response.text
    over = {"body": "text", "summary": "s" * (TEXT_CHARS["summary"] + 1)}
    refused(http.put(page.url, json=over), 400, "'summary'", "the limit is 4000")
    page.unchanged(http)


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("tags", [f"t{i}" for i in range(LIST_CAPS["tags"][0] + 1)], "51 items"),
        ("tags", ["t" * 101], "101 characters"),
        ("entities", [f"e{i}" for i in range(LIST_CAPS["entities"][0] + 1)], "101 items"),
        ("entities", ["e" * 201], "201 characters"),
        ("abstract", "a" * 4001, "4001 characters"),
    ],
)
def test_field_caps_beside_the_body(
    srv: ServerProcess, http: httpx.Client, field: str, value: Any, problem: str
) -> None:
    page = Page(srv, http, "fields", "notes/a.md")
    response = http.put(page.url, json={"body": "text", field: value})
    assert response.status_code in (400, 422), response.text
    assert field in response.json()["message"] and problem in response.json()["message"]
    page.unchanged(http)


@pytest.mark.parametrize(
    ("block", "field", "problem"),
    [
        ("summary: " + "s" * 20_000, "summary", "20000 characters"),
        ("title: " + "t" * 300, "title", "300 characters"),
        ("tags: [" + ",".join(f"t{i}" for i in range(60)) + "]", "tags", "60 items"),
        ("entities: [" + "e" * 300 + "]", "entities", "300 characters"),
        ("source_files: [" + ",".join(f"f{i}" for i in range(101)) + "]", "source_files", "101"),
        ("k" * 101 + ": 1", "kkk", "key of 101 characters"),
        ("\n".join(f"u{i}: 1" for i in range(51)), "u50", "unknown keys"),
        ("custom: " + "c" * 20_000, "custom", "bytes long as JSON"),
        ('title: "a\\0b"', "title", "NUL character"),
        ('tags: [ok, "\\ud800"]', "tags", "lone surrogate"),
        ('custom: {"\\0": 1}', "custom", "NUL character"),
    ],
)
def test_frontmatter_inside_the_body_is_capped_and_checked(
    srv: ServerProcess, http: httpx.Client, block: str, field: str, problem: str
) -> None:
    page = Page(srv, http, "inside", "notes/a.md")
    answer = refused(http.put(page.url, json={"body": f"---\n{block}\n---\nbody\n"}), 400, problem)
    assert answer["error"] == "invalid_frontmatter" and field in answer["message"]
    page.unchanged(http)


def test_the_written_file_fits_the_page_limit(srv: ServerProcess, http: httpx.Client) -> None:
    page = Page(srv, http, "size", "notes/a.md")
    body = "x" * (1024 * 1024 - 200)  # fits alone; not with a 4000-character summary
    answer = refused(
        http.put(page.url, json={"body": body, "summary": "s" * 4000}), 413, "with its frontmatter"
    )
    assert answer["error"] == "too_large"
    page.unchanged(http)
    block = "---\nnote: " + "n" * MAX_FRONTMATTER_BYTES + "\n---\nbody\n"
    refused(http.put(page.url, json={"body": block}), 400, f"limit is {MAX_FRONTMATTER_BYTES}")
    page.unchanged(http)
    # 8 KB said once, repeated by 8 aliases: small to send, 72 KB once written out.
    aliased = "s: &s " + "x" * 8000 + "\n" + "".join(f"k{i}: *s\n" for i in range(8))
    answer = refused(
        http.put(page.url, json={"body": f"---\n{aliased}---\nbody\n"}), 413, "frontmatter block"
    )
    page.unchanged(http)


def test_the_cli_names_the_problem(srv: ServerProcess, http: httpx.Client) -> None:
    page = Page(srv, http, "cli", "notes/a.md")
    common = ("--server", srv.url, "--project", "cli")
    text = SELF_REFERENCE.encode()
    wrote = run_cli("write-page", "notes/a.md", *common, data_dir=srv.data_dir, input=text)
    assert wrote.returncode == 1 and b"refers to itself" in _flat(wrote.stderr), wrote.stderr
    page.unchanged(http)


# -- MCP ----------------------------------------------------------------------------------


async def _write(srv: ServerProcess, **args: Any) -> Any:
    async with connect(srv) as client:
        try:
            return await client.call_tool("memory_write_page", args)
        except MCPError as exc:
            error = exc
    raise error


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        (alias_bomb(), "more than 10000"),
        (SELF_REFERENCE, "refers to itself"),
        ("---\ntags: [" + ",".join(f"t{i}" for i in range(60)) + "]\n---\nx\n", "60 items"),
        ("---\nentities: [" + "e" * 201 + "]\n---\nx\n", "201 characters"),
        ('---\nsummary: "a\\0b"\n---\nx\n', "NUL character"),
    ],
)
def test_mcp_write_refuses_hostile_yaml(
    srv: ServerProcess, http: httpx.Client, body: str, problem: str
) -> None:
    page = Page(srv, http, "mcp", "notes/a.md")
    with pytest.raises(MCPError) as caught:
        asyncio.run(_write(srv, path="notes/a.md", project="mcp", body=body))
    assert caught.value.code == -32602
    assert problem in caught.value.message and "body" in caught.value.message
    page.unchanged(http)


def test_mcp_field_caps_match_the_wiki_caps(srv: ServerProcess, http: httpx.Client) -> None:
    page = Page(srv, http, "mcp", "notes/b.md")
    for field, value in [("tags", ["t"] * 51), ("entities", ["e" * 201])]:
        with pytest.raises(MCPError) as caught:
            asyncio.run(_write(srv, path="notes/b.md", project="mcp", body="x", **{field: value}))
        assert caught.value.code == -32602 and field in caught.value.message
    page.unchanged(http)


# -- Files on disk ------------------------------------------------------------------------


def _place(data_dir: Path, path: str, text: str) -> None:
    file = data_dir / "wiki" / "default" / "disk" / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(text.encode("utf-8"))


def test_hostile_files_on_disk_never_stop_serve_or_reindex(data_dir: Path) -> None:
    assert len(SELF_REFERENCE.encode()) == 24
    _place(data_dir, "notes/self.md", SELF_REFERENCE)
    _place(data_dir, "notes/bomb.md", alias_bomb() + "kaboomword\n")
    _place(data_dir, "notes/long.md", "---\ntitle: Long\nsummary: " + "s" * 5000 + "\n---\nok\n")
    server = ServerProcess(data_dir).start()
    try:
        with server.client() as http:
            pages = PAGES.format(project="disk")
            self_page = http.get(f"{pages}/notes/self.md").json()
            assert "refers to itself" in self_page["frontmatter_error"]
            assert self_page["body"] == SELF_REFERENCE and self_page["frontmatter"] == {}
            bomb = http.get(f"{pages}/notes/bomb.md").json()
            assert "more than 10000" in bomb["frontmatter_error"]
            long = http.get(f"{pages}/notes/long.md").json()
            assert long["title"] == "Long" and "summary" not in long["frontmatter"]
            assert "'summary' is 5000 characters" in long["frontmatter_error"]
            listed = {p["path"] for p in http.get(pages, params={"limit": 10}).json()["pages"]}
            assert {"notes/self.md", "notes/bomb.md", "notes/long.md"} <= listed
            found = http.get("/api/v1/search", params={"q": "kaboomword", "project": "disk"})
            assert [h["path"] for h in found.json()["hits"]] == ["notes/bomb.md"]
            _place(data_dir, "notes/later.md", SELF_REFERENCE + "watchedword\n")
            assert _indexed(http, f"{pages}/notes/later.md")["frontmatter_error"]
        log = (data_dir / "test-server.log").read_text()
        assert "notes/self.md: frontmatter anchor &a refers to itself" in log
    finally:
        server.stop()
    reindex = run_cli("reindex", data_dir=data_dir)
    assert reindex.returncode == 0, reindex.stderr
    assert b"notes/self.md: frontmatter anchor &a refers to itself" in _flat(reindex.stderr)
    assert b"reindexed 4 files" in reindex.stdout


def _indexed(http: httpx.Client, url: str) -> dict[str, Any]:
    """The page once the watcher has indexed it."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        response = http.get(url)
        if response.status_code == 200:
            return dict(response.json())
        time.sleep(0.05)
    raise AssertionError(f"{url} was not indexed")


def _flat(output: bytes) -> bytes:
    """Console output with its line wrapping undone."""
    return b" ".join(output.split())
