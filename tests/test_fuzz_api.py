"""Hypothesis against one real server: the page API, search, /hook/batch, /hook with
hostile params, and MCP tool arguments (raw JSON-RPC and a real client).

tests/test_hooks_fuzz.py already fuzzes /hook bodies in process and checks what the
sanitizer stores; this suite adds the rest of the surface over real HTTP. Each
answer must come within the client timeout and be below 500, the server must log
no traceback, and pages written before the fuzzing stay byte-identical.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import ServerProcess
from tests.fuzz_values import (
    BAD_FIELD,
    BATCH_ITEM,
    BODIES,
    DEEP,
    HOOK_PARAMS,
    ID_PARAMS,
    INTS,
    JSON,
    PAGE_FIELDS,
    PATHS,
    PROJECTS,
    QUERY_TEXT,
    RANDOM_HOOK_PARAMS,
    WORKSPACES,
    dumps,
    query,
    tool_call,
)
from tests.mcp_held import HeldClient
from tests.mcp_support import module_server
from tests.pinned_pages import PAGES_URL, PINNED, PROJECT, Snapshot, snapshot, write_pinned

TIMEOUT_S = 10.0


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        derandomize=True,
        database=None,
    )


# -- the server ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from module_server(tmp_path_factory)


@pytest.fixture(scope="module")
def before(srv: ServerProcess) -> Snapshot:
    with srv.client() as client:
        write_pinned(client)
        return snapshot(srv, client)


@pytest.fixture
def client(srv: ServerProcess, before: Snapshot) -> Iterator[httpx.Client]:
    with srv.client(timeout=TIMEOUT_S) as http:
        yield http
        assert snapshot(srv, http) == before
        log = (srv.data_dir / "test-server.log").read_text(errors="replace")
        assert "Traceback" not in log, log[log.index("Traceback") - 300 :][:4000]


def send(client: httpx.Client, method: str, url: str, **kwargs: Any) -> httpx.Response:
    """One request; a stall past the timeout or a 5xx fails the example."""
    try:
        answer = client.request(method, url, **kwargs)
    except httpx.TimeoutException:
        pytest.fail(f"no answer within {TIMEOUT_S} s: {method} {url[:200]}")
    assert answer.status_code < 500, (method, url[:200], answer.status_code, answer.text[:500])
    if answer.status_code >= 400 and answer.status_code != 404:
        payload = answer.json()
        error = payload.get("error")
        assert payload.get("message") or (isinstance(error, dict) and error["message"]), payload
    return answer


JSON_HEADERS = {"content-type": "application/json"}


# -- the page API and search --------------------------------------------------------------


def test_page_api_survives_random_requests(client: httpx.Client) -> None:
    @fuzz(500)
    @given(
        method=st.sampled_from(["PUT", "GET", "DELETE", "PUT"]),
        workspace=WORKSPACES,
        project=PROJECTS,
        segments=PATHS,
        suffix=st.sampled_from([".md", ".md", ".md", "", ".MD", ".md/", ".md%00"]),
        body=BODIES,
        params=ID_PARAMS,
    )
    def run(
        method: str,
        workspace: str,
        project: str,
        segments: list[str],
        suffix: str,
        body: bytes,
        params: dict[str, str],
    ) -> None:
        path = "/".join(segments) + suffix
        url = f"/api/v1/projects/{workspace}/{project}/pages/{path}"
        content = body if method == "PUT" else None
        send(client, method, url + query(params), content=content, headers=JSON_HEADERS)
        if method == "GET":
            history = url.replace("/pages/", "/history/", 1)
            send(client, "GET", history)

    run()


def test_writes_to_pinned_pages_with_one_bad_field_are_refused(client: httpx.Client) -> None:
    @fuzz(200)
    @given(
        path=st.sampled_from(sorted(PINNED)),
        bad=BAD_FIELD,
        others=st.dictionaries(st.sampled_from(PAGE_FIELDS), JSON, max_size=4),
        verb=st.sampled_from(["PUT", "DELETE"]),
    )
    def run(path: str, bad: tuple[str, Any], others: dict[str, Any], verb: str) -> None:
        url = f"{PAGES_URL}/{quote(path)}"
        if verb == "DELETE":
            if not isinstance(bad[1], int) or isinstance(bad[1], bool) or 0 < bad[1] < 2**63:
                return  # only ids no page can have
            answer = send(client, "DELETE", url, params={"expected_page_id": bad[1]})
        else:
            page = {"body": "replaced", **others, bad[0]: bad[1]}
            answer = send(client, "PUT", url, content=dumps(page), headers=JSON_HEADERS)
        assert 400 <= answer.status_code < 500, (bad, answer.text)

    run()


def test_reads_of_pinned_pages_survive_random_parameters(client: httpx.Client) -> None:
    @fuzz(200)
    @given(
        path=st.sampled_from(sorted(PINNED)),
        route=st.sampled_from(["pages", "history"]),
        params=ID_PARAMS,
    )
    def run(path: str, route: str, params: dict[str, str]) -> None:
        url = f"/api/v1/projects/default/{PROJECT}/{route}/{quote(path)}"
        send(client, "GET", url + query(params))

    run()


def test_search_and_listings_survive_random_queries(client: httpx.Client) -> None:
    @fuzz(200)
    @given(
        route=st.sampled_from(
            [
                "/api/v1/search",
                f"/api/v1/projects/default/{PROJECT}/pages",
                "/api/v1/handoffs",
                "/api/v1/sessions",
                "/api/v1/sessions/observations",
                "/api/v1/sessions/s%00/observations",
                "/api/v1/status",
                "/handoff",
            ]
        ),
        params=st.dictionaries(
            st.sampled_from(
                [
                    *("q", "project", "workspace", "scope", "limit", "kind", "tier", "tag"),
                    *("path_prefix", "as_of", "before_id", "status", "global", "explain"),
                    "budget",
                ]
            ),
            st.one_of(QUERY_TEXT, INTS.map(str), st.sampled_from([PROJECT, "true", "*", "NEAR("])),
            max_size=6,
        ),
    )
    def run(route: str, params: dict[str, str]) -> None:
        if route == "/handoff":
            params.pop("project", None)  # claiming a handoff changes state: read-only here
            params["project"] = "fuzz"
        send(client, "GET", route + query(params))

    run()


# -- capture ------------------------------------------------------------------------------


def test_hook_batch_and_params_survive_random_input(client: httpx.Client) -> None:
    @fuzz(300)
    @given(
        kind=st.sampled_from(["batch", "batch", "hook"]),
        items=st.lists(BATCH_ITEM, max_size=6),
        raw=st.one_of(st.none(), st.binary(max_size=200), DEEP.map(str.encode)),
        params=st.one_of(HOOK_PARAMS, RANDOM_HOOK_PARAMS),
    )
    def run(kind: str, items: list[Any], raw: bytes | None, params: dict[str, str]) -> None:
        if params.get("project") == PROJECT:
            params["project"] = "fuzz"
        if kind == "batch":
            for item in items:
                given_params = item.get("params") if isinstance(item, dict) else None
                if isinstance(given_params, dict) and given_params.get("project") == PROJECT:
                    given_params["project"] = "fuzz"
            content = raw if raw is not None else dumps(items)
            send(client, "POST", "/hook/batch", content=content, headers=JSON_HEADERS)
        else:
            first = items[0] if items else {}
            event = first.get("body", first) if isinstance(first, dict) else first
            content = raw if raw is not None else dumps(event)
            send(client, "POST", "/hook" + query(params), content=content, headers=JSON_HEADERS)

    run()


# -- MCP ----------------------------------------------------------------------------------

_INTERNAL = re.compile(r"Error executing tool|internal error", re.IGNORECASE)


def test_mcp_tool_arguments_survive_random_json_rpc(client: httpx.Client) -> None:
    headers = {**JSON_HEADERS, "accept": "application/json, text/event-stream"}

    @fuzz(500)
    @given(call=tool_call(), raw=st.one_of(st.none(), st.none(), st.binary(max_size=100), DEEP))
    def run(call: tuple[str, dict[str, Any]], raw: bytes | str | None) -> None:
        name, args = call
        message = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
        message["params"] = {"name": name, "arguments": args}
        content = dumps(message) if raw is None else raw if isinstance(raw, bytes) else raw.encode()
        answer = send(client, "POST", "/mcp", content=content, headers=headers)
        if answer.status_code == 200:
            reply = answer.json()
            error = reply.get("error")
            if error is not None:
                assert error["code"] != -32603, reply
            else:
                text = json.dumps(reply["result"])[:2000]
                assert not _INTERNAL.search(text), (name, args, text)

    run()


def test_mcp_tool_arguments_survive_a_real_client(srv: ServerProcess, client: httpx.Client) -> None:
    with HeldClient(srv, timeout=TIMEOUT_S) as mcp:

        @fuzz(200)
        @given(call=tool_call())
        def run(call: tuple[str, dict[str, Any]]) -> None:
            name, args = call
            outcome = mcp.call(name, args)
            assert outcome.code != -32603 and not _INTERNAL.search(outcome.text), (
                name,
                args,
                outcome,
            )

        run()
