"""Hostile values, reproduced as reported, against one real server over HTTP and MCP:
each is a 4xx (HTTP) or -32602 (MCP) naming the field, and pages written before stay
byte-identical."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from mcp.shared.exceptions import MCPError
from starlette.testclient import TestClient

from ai_memory.core.errors import InvalidInput
from ai_memory.web.errors import install_error_handlers
from tests.conftest import ServerProcess
from tests.mcp_support import connect, data, module_server
from tests.pinned_pages import PAGES_URL, PROJECT, Snapshot, snapshot, write_pinned

BIG = [2**63, 2**64]
SURROGATE = "\\ud800"  # the JSON escape, sent as is: json.dumps cannot produce it
EMOJI_SEGMENT = "😀" * 60 + ".md"  # 243 bytes: fits 255, but not with the temp-file prefix


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def before(srv: ServerProcess) -> Snapshot:
    with srv.client() as client:
        write_pinned(client)
        handoff = client.post("/api/v1/handoffs", json={"project": PROJECT, "summary": "s"})
        assert handoff.status_code == 201, handoff.text
        return snapshot(srv, client)


@pytest.fixture
def client(srv: ServerProcess, before: Snapshot) -> Iterator[httpx.Client]:
    """One keep-alive connection per test: a reset would fail the next request on it."""
    with srv.client(timeout=15) as http:
        yield http
        assert http.get("/healthz").status_code == 200
        assert snapshot(srv, http) == before


def refused(answer: httpx.Response, field: str, status: int = 422) -> str:
    assert answer.status_code == status, (answer.status_code, answer.text)
    message: str = answer.json()["message"]
    assert field in message, message
    return message


def raw_json(text: str) -> dict[str, Any]:
    return {"content": text.encode(), "headers": {"content-type": "application/json"}}


@pytest.mark.parametrize("big", BIG)
def test_ids_past_sqlite_integers_are_refused_over_http(client: httpx.Client, big: int) -> None:
    page = f"{PAGES_URL}/decisions/db.md"
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        ("GET", page, {"params": {"page_id": big}}, "page_id"),
        ("GET", page, {"params": {"version": big}}, "version"),
        ("PUT", page, {"json": {"body": "x", "expected_page_id": big}}, "expected_page_id"),
        ("DELETE", page, {"params": {"expected_page_id": big}}, "expected_page_id"),
        ("POST", f"/api/v1/handoffs/{big}/cancel", {"params": {"project": PROJECT}}, "handoff_id"),
        ("POST", "/api/v1/handoffs/accept", {"json": {"project": PROJECT, "id": big}}, "id"),
        (
            "GET",
            "/api/v1/sessions/observations",
            {"params": {"project": PROJECT, "before_id": big}},
            "before_id",
        ),
        (
            "GET",
            "/api/v1/sessions/s-1/observations",
            {"params": {"project": PROJECT, "before_id": big}},
            "before_id",
        ),
    ]
    for method, url, kwargs, field in cases:
        message = refused(client.request(method, url, **kwargs), field)
        assert "9223372036854775807" in message


PAGE_FIELDS = {
    "title": f'"{SURROGATE}"',
    "tags": f'["ok", "{SURROGATE}"]',
    "entities": f'["{SURROGATE}"]',
    "summary": f'"a{SURROGATE}b"',
    "abstract": f'"{SURROGATE}"',
    "expires_at": f'"2030-01-01{SURROGATE}"',
    "body": f'"text {SURROGATE}"',
}


@pytest.mark.parametrize("field", sorted(PAGE_FIELDS))
def test_a_lone_surrogate_in_a_page_field_is_refused(client: httpx.Client, field: str) -> None:
    fields = {"body": '"x"', field: PAGE_FIELDS[field]}
    text = "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"
    for path in ("decisions/db.md", "notes/new.md"):
        message = refused(client.put(f"{PAGES_URL}/{path}", **raw_json(text)), field)
        assert "lone surrogate U+D800" in message
    assert client.get(f"{PAGES_URL}/notes/new.md").status_code == 404


HANDOFF_FIELDS = {
    "summary": f'"{SURROGATE}"',
    "content": f'{{"files": ["a.py", "{SURROGATE}"]}}',
    "next_steps": f'["{SURROGATE}"]',
    "open_questions": f'"{SURROGATE}"',
    "agent": f'"{SURROGATE}"',
    "session_id": f'"{SURROGATE}"',
    "cwd": f'"/x{SURROGATE}"',
}


@pytest.mark.parametrize("field", sorted(HANDOFF_FIELDS))
def test_a_lone_surrogate_in_handoff_and_session_fields_is_refused(
    client: httpx.Client, field: str
) -> None:
    fields = {"project": f'"{PROJECT}"', "summary": '"s"', field: HANDOFF_FIELDS[field]}
    text = "{" + ", ".join(f'"{k}": {v}' for k, v in fields.items()) + "}"
    refused(client.post("/api/v1/handoffs", **raw_json(text)), field)
    if field in ("agent", "session_id", "cwd"):
        accept = f'{{"project": "{PROJECT}", "{field}": {HANDOFF_FIELDS[field]}}}'
        refused(client.post("/api/v1/handoffs/accept", **raw_json(accept)), field)
    if field in ("agent", "session_id"):
        end = f'{{"project": "{PROJECT}", "{field}": {HANDOFF_FIELDS[field]}}}'
        refused(client.post("/api/v1/sessions/finalize", **raw_json(end)), field)
    listed = client.get("/api/v1/handoffs", params={"project": PROJECT}).json()["handoffs"]
    assert [h["summary"] for h in listed] == ["s"]


def test_nul_in_title_and_tags_is_refused(client: httpx.Client) -> None:
    page = f"{PAGES_URL}/decisions/db.md"
    refused(client.put(page, json={"body": "x", "title": "a\x00b"}), "title")
    message = refused(client.put(page, json={"body": "x", "tags": ["ok", "a\x00"]}), "tags.1")
    assert "NUL" in message
    content = {"project": PROJECT, "summary": "s", "content": {"k\x00": "v"}}
    refused(client.post("/api/v1/handoffs", json=content), "content")


def test_a_segment_of_60_emoji_is_refused_in_bytes(client: httpx.Client) -> None:
    message = refused(client.put(f"{PAGES_URL}/{EMOJI_SEGMENT}", json={"body": "x"}), "243", 400)
    assert "241" in message
    assert client.get(f"{PAGES_URL}/{EMOJI_SEGMENT}").status_code == 400
    longest = "é" * 119 + ".md"  # 241 bytes: the longest name the writer can stage
    assert client.put(f"{PAGES_URL}/{longest}", json={"body": "x"}).status_code == 200
    assert client.get(f"{PAGES_URL}/{longest}").json()["body"] == "x"
    assert client.delete(f"{PAGES_URL}/{longest}").status_code == 200


@pytest.mark.parametrize("url", ["/api/v1/projects/default/proj%0A", "/api/v1/projects/ws%0A/p"])
def test_names_ending_in_a_newline_are_refused(client: httpx.Client, url: str) -> None:
    # Refused before any route looks at the name: no route can read it as "proj".
    refused(client.put(f"{url}/pages/a.md", json={"body": "x"}), "control character", 400)
    assert "invalid_request" in client.get(f"{url}/pages").text
    projects = client.get("/api/v1/projects").json()["projects"]
    names = [v for project in projects for v in project.values() if isinstance(v, str)]
    assert names and not any("\n" in name for name in names)


# -- MCP, with a real client ------------------------------------------------------------


async def _call(srv: ServerProcess, name: str, args: dict[str, Any]) -> Any:
    async with connect(srv) as mcp:
        try:
            return await mcp.call_tool(name, args)
        except MCPError as exc:
            error = exc
    raise error


def invalid(srv: ServerProcess, name: str, field: str, **args: Any) -> str:
    with pytest.raises(MCPError) as caught:
        asyncio.run(_call(srv, name, {"project": PROJECT, **args}))
    assert caught.value.code == -32602, caught.value
    message = str(caught.value)
    assert repr(field) in message, message
    return message


@pytest.mark.parametrize("big", BIG)
def test_ids_past_sqlite_integers_are_refused_over_mcp(
    srv: ServerProcess, client: httpx.Client, big: int
) -> None:
    page = {"path": "decisions/db.md"}
    cases: list[tuple[str, str, dict[str, Any]]] = [
        ("memory_read_page", "page_id", {**page, "page_id": big}),
        ("memory_read_page", "version", {**page, "version": big}),
        ("memory_write_page", "expected_page_id", {**page, "body": "x", "expected_page_id": big}),
        (
            "memory_patch_page",
            "expected_page_id",
            {**page, "op": "append", "content": "x", "expected_page_id": big},
        ),
        ("memory_delete_page", "expected_page_id", {**page, "expected_page_id": big}),
        ("memory_handoff_cancel", "handoff_id", {"handoff_id": big}),
        ("memory_handoff_accept", "handoff_id", {"handoff_id": big}),
        ("memory_read_session_observations", "before_id", {"before_id": big}),
    ]
    for name, field, args in cases:
        assert "9223372036854775807" in invalid(srv, name, field, **args)


def test_nul_names_and_long_segments_are_refused_over_mcp(
    srv: ServerProcess, client: httpx.Client
) -> None:
    write = {"path": "decisions/db.md", "body": "x"}
    invalid(srv, "memory_write_page", "title", **write, title="a\x00b")
    invalid(srv, "memory_write_page", "tags.0", **write, tags=["a\x00"])
    invalid(srv, "memory_handoff_begin", "next_steps.0", summary="s", next_steps=["\x00"])
    assert "243 bytes" in invalid(srv, "memory_write_page", "path", path=EMOJI_SEGMENT, body="x")
    for name in ("proj\n", "ws\n"):
        where = {"project": name} if name.startswith("proj") else {"workspace": name}
        with pytest.raises(MCPError) as caught:
            asyncio.run(_call(srv, "memory_write_page", {**write, **where}))
        assert caught.value.code == -32602 and repr(name) in str(caught.value)
    assert data(asyncio.run(_call(srv, "memory_recent", {"project": PROJECT})))["pages"]


MCP_FIELDS = {
    "memory_write_page": {
        "title": f'"{SURROGATE}"',
        "tags": f'["ok", "{SURROGATE}"]',
        "entities": f'["{SURROGATE}"]',
        "expires_at": f'"2030-01-01{SURROGATE}"',
        "body": f'"text {SURROGATE}"',
    },
    "memory_handoff_begin": {
        "summary": f'"{SURROGATE}"',
        "next_steps": f'["{SURROGATE}"]',
        "open_questions": f'["{SURROGATE}"]',
        "shared": f'["a", "b{SURROGATE}"]',
    },
    "memory_read_session_observations": {"session_id": f'"{SURROGATE}"'},
    "memory_query": {"query": f'"{SURROGATE}"'},
}


@pytest.mark.parametrize(
    ("tool", "field"), [(tool, field) for tool, fields in MCP_FIELDS.items() for field in fields]
)
def test_a_lone_surrogate_over_mcp_is_refused_naming_the_argument(
    client: httpx.Client, tool: str, field: str
) -> None:
    """Sent as the JSON escape, which no MCP client library can produce, so as raw JSON-RPC."""
    base = {
        "memory_write_page": '"path": "decisions/db.md", "body": "x"',
        "memory_handoff_begin": '"summary": "s"',
    }.get(tool, "")
    arguments = ", ".join(
        part
        for part in (f'"project": "{PROJECT}"', base, f'"{field}": {MCP_FIELDS[tool][field]}')
        if part
    )
    call = (
        '{"jsonrpc": "2.0", "id": 7, "method": "tools/call", '
        f'"params": {{"name": "{tool}", "arguments": {{{arguments}}}}}}}'
    )
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    answer = client.post("/mcp", content=call.encode(), headers=headers)
    assert answer.status_code == 200, answer.text
    reply = answer.json()
    assert reply["id"] == 7 and reply["error"]["code"] == -32602, reply
    assert f"invalid argument '{field}" in reply["error"]["message"], reply
    assert "lone surrogate U+D800" in reply["error"]["message"]
    listed = client.get("/api/v1/handoffs", params={"project": PROJECT}).json()["handoffs"]
    assert [h["summary"] for h in listed] == ["s"]


def test_errors_always_render_and_a_bug_costs_one_answer_not_the_connection() -> None:
    """A message echoing a lone surrogate still encodes; an unexpected exception is
    answered inside the app (the test client re-raises anything that escapes it)."""
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/echo")
    async def echo() -> None:
        raise InvalidInput("bad text \ud800 here")

    @app.get("/bug")
    async def bug() -> None:
        raise RuntimeError("a bug")

    with TestClient(app) as http:
        echoed = http.get("/echo")
        assert echoed.status_code == 400
        assert echoed.json()["message"] == "bad text \\ud800 here"
        for _ in range(2):
            answer = http.get("/bug")
            assert answer.status_code == 500
            assert answer.json() == {"error": "internal", "message": "internal error: RuntimeError"}
