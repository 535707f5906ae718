"""Hypothesis against one real server: the page API, search, /hook/batch, /hook with
hostile params, and MCP tool arguments (raw JSON-RPC and a real client).

tests/test_hooks_fuzz.py already fuzzes /hook bodies in process and checks what the
sanitizer stores; this suite adds the rest of the surface over real HTTP. Each
answer must come within the client timeout and be below 500, the server must log
no traceback, and pages written before the fuzzing stay byte-identical.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Iterator
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client
from mcp.shared.exceptions import MCPError

from tests.conftest import ServerProcess
from tests.mcp_support import connect, module_server
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


# -- values -------------------------------------------------------------------------------

HOSTILE_TEXT = st.sampled_from(
    ["\x00", "\ud800", "\udfff", "a\ud83d", "\ufeff", "\u202e", "é" * 3, "😀" * 70, "\r\n", ""]
)
TEXT = st.one_of(
    st.text(max_size=40),
    HOSTILE_TEXT,
    st.tuples(st.text(max_size=8), HOSTILE_TEXT).map("".join),
    st.integers(0, 60_000).map(lambda n: "x" * n),
)
# Query values: a URL stays under the server's header limit (16 KiB).
QUERY_TEXT = st.one_of(
    st.text(max_size=40),
    HOSTILE_TEXT,
    st.tuples(st.text(max_size=8), HOSTILE_TEXT).map("".join),
    st.integers(0, 2_000).map(lambda n: "x" * n),
)
INTS = st.one_of(
    st.integers(-(2**70), 2**70),
    st.sampled_from([0, -1, 1, 2**31, 2**63 - 1, 2**63, 2**64, -(2**63) - 1, 10**100]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    INTS,
    st.floats(allow_nan=True, allow_infinity=True),
    TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(TEXT.filter(lambda t: len(t) < 50), children, max_size=4)
    ),
    max_leaves=12,
)
# Integers as a query string spells them, edges first.
ID_TEXT = st.one_of(
    st.sampled_from(
        [
            *("9223372036854775807", "9223372036854775808", "18446744073709551616"),
            *("-9223372036854775809", "0", "-1", "1", "1e3", "0x10", " 1", "1.5", ""),
        ]
    ),
    INTS.map(str),
)
ID_KEYS = ["page_id", "version", "expected_page_id", "limit"]
ID_PARAMS = st.one_of(
    st.tuples(st.sampled_from(ID_KEYS), ID_TEXT).map(lambda kv: {kv[0]: kv[1]}),
    st.tuples(st.sampled_from(ID_KEYS), ID_TEXT).map(lambda kv: {kv[0]: kv[1]}),
    st.fixed_dictionaries(
        {},
        optional={**{key: st.one_of(ID_TEXT, QUERY_TEXT) for key in ID_KEYS}, "junk": QUERY_TEXT},
    ),
)
DEEP = st.integers(1, 100_000).map(lambda n: "[" * n + "]" * n)
SEGMENTS = st.sampled_from(
    [
        "..",
        "%2e%2e",
        "%2E%2E",
        ".%2e",
        "..%2f..",
        "..\\..",
        "\\",
        "%5c",
        ".git",
        ".obsidian",
        "%2Fetc%2Fpasswd",
        "%00",
        "%ff%fe",
        "\uff0e\uff0e",
        "\u2024\u2024",
        "\u2025",
        "C:",
        "~",
        ".",
        "a%0a",
        "😀" * 61,
        "x" * 256,
        "pinned",
    ]
)
ESCAPED = st.text(min_size=1, max_size=12).map(
    lambda t: quote(t.encode("utf-8", "surrogatepass"), safe="")
)
PLAIN = st.sampled_from(["notes", "a", "décisions", "日本語", "x-1_y", "😀" * 59])
PATHS = st.lists(st.one_of(PLAIN, PLAIN, SEGMENTS, ESCAPED), min_size=1, max_size=4)
NAMES = st.one_of(
    st.sampled_from(["default", "fuzz", "proj%0A", "ws%0A", "..", "%2e", "a%00", "_global"]),
    st.text(min_size=1, max_size=10).map(lambda t: quote(t, safe="")),
)
WORKSPACES = st.one_of(st.just("default"), st.just("default"), NAMES)
PROJECTS = st.one_of(st.just("fuzz"), st.just("fuzz"), NAMES).filter(lambda n: n != PROJECT)
PAGE_FIELDS = [
    "body",
    "title",
    "kind",
    "tier",
    "tags",
    "entities",
    "pinned",
    "expires_at",
    "summary",
    "abstract",
    "expected_page_id",
    "create_only",
]
# One value that must make a write fail, whatever else the request holds.
BAD_FIELD = st.sampled_from(
    [
        ("title", "a\ud800"),
        ("tags", ["ok", "\x00"]),
        ("entities", ["\udc00"]),
        ("summary", "\ud800"),
        ("abstract", "x\x00"),
        ("expires_at", "\ud800"),
        ("body", "a\x00b"),
        ("body", "x\udfff"),
        ("expected_page_id", 2**63),
        ("expected_page_id", 2**64),
        ("expected_page_id", 0),
        ("kind", "nonsense"),
        ("tags", "not a list"),
        ("create_only", True),
        ("unknown_field", 1),
    ]
)


def dumps(value: Any) -> bytes:
    """JSON the way a hostile client spells it: lone surrogates as ``\\ud800`` escapes,
    NaN and Infinity as bare words."""
    return json.dumps(value, ensure_ascii=True).encode()


def query(params: dict[str, str]) -> str:
    """A query string as raw bytes would spell it: lone surrogates become invalid UTF-8."""
    pairs = (
        f"{quote(k)}={quote(v.encode('utf-8', 'surrogatepass'), safe='')}"
        for k, v in params.items()
    )
    return "?" + "&".join(pairs)


FRONTMATTER = st.one_of(
    st.text(max_size=60).map(lambda t: f"---\n{t}\n---\nbody"),
    st.sampled_from(
        [
            "---\ntitle: [x\n---\nbody",
            "---\na: &a [x]\nb: [*a, *a, *a]\n---\nbody",
            "---\n!!python/object/apply:os.system ['true']\n---\n",
            "---\ntags: " + "[" * 500 + "]" * 500 + "\n---\n",
            "---\ntitle: ok\n---\n",
            "---\n---\n",
        ]
    ),
)
LISTS = st.one_of(st.lists(TEXT, max_size=5), JSON)
PAGE = st.fixed_dictionaries(
    {"body": st.one_of(TEXT, FRONTMATTER)},
    optional={
        "title": TEXT,
        "kind": st.sampled_from(["note", "decision", "session", "rule", "bogus", ""]),
        "tier": st.sampled_from(["working", "semantic", "x"]),
        "tags": LISTS,
        "entities": LISTS,
        "pinned": st.one_of(st.booleans(), JSON),
        "expires_at": st.one_of(TEXT, st.sampled_from(["2030-01-01", "2030-01-01T00:00:00Z"])),
        "summary": TEXT,
        "abstract": TEXT,
        "expected_page_id": INTS,
        "create_only": st.booleans(),
    },
)
BODIES = st.one_of(
    PAGE.map(dumps),
    PAGE.map(dumps),
    st.dictionaries(st.sampled_from(PAGE_FIELDS), JSON, max_size=6).map(dumps),
    JSON.map(dumps),
    st.binary(max_size=300),
    DEEP.map(str.encode),
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
    @fuzz(250)
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
    @fuzz(120)
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
    @fuzz(120)
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


EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd", "PreCompact"]
HOOK_PARAMS = st.fixed_dictionaries(
    {
        "project": st.just("fuzz"),
        "agent": st.sampled_from(["claude-code", "codex", "gemini"]),
        "event": st.sampled_from(EVENTS),
    },
    optional={
        "session_id": st.one_of(QUERY_TEXT, st.sampled_from(["s-1", "s-2"])),
        "ingest_key": QUERY_TEXT,
        "cwd": st.one_of(QUERY_TEXT, st.just("/tmp/x")),
        "workspace": st.one_of(st.just("default"), QUERY_TEXT),
    },
)
RANDOM_HOOK_PARAMS = st.dictionaries(
    st.sampled_from(["project", "agent", "event", "session_id", "ingest_key", "cwd"]),
    st.one_of(QUERY_TEXT, st.sampled_from(["fuzz", "codex", "SessionEnd", "/tmp/x"])),
    max_size=6,
)
HOOK_BODY = st.fixed_dictionaries(
    {},
    optional={
        "prompt": TEXT,
        "tool_name": TEXT,
        "tool_input": JSON,
        "tool_response": JSON,
        "last_assistant_message": TEXT,
        "session_id": TEXT,
        "hook_event_name": st.sampled_from(EVENTS),
        "transcript_path": st.sampled_from(["/etc/passwd", "../../x", "\x00"]),
    },
)
BATCH_ITEM = st.one_of(
    st.fixed_dictionaries({"params": HOOK_PARAMS, "body": HOOK_BODY}),
    st.fixed_dictionaries(
        {
            "params": st.dictionaries(
                st.sampled_from(["project", "agent", "event", "session_id", "cwd", "workspace"]),
                st.one_of(TEXT, st.sampled_from(["fuzz", "claude-code", "PostToolUse"])),
                max_size=6,
            ),
            "body": st.one_of(JSON, HOOK_BODY),
        }
    ),
    JSON,
)


def test_hook_batch_and_params_survive_random_input(client: httpx.Client) -> None:
    @fuzz(150)
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

TOOLS = {
    "memory_query": ["query", "q", "limit", "kind", "tag", "path_prefix", "scopes", "as_of"],
    "memory_read_page": ["path", "query", "page_id", "version", "max_chars", "related_depth"],
    "memory_recent": ["limit", "kind"],
    "memory_write_page": [
        *("path", "body", "title", "tags", "entities", "expires_at", "pinned"),
        *("expected_page_id", "create_only", "scope", "kind", "tier"),
    ],
    "memory_patch_page": ["path", "expected_page_id", "op", "content", "section", "level"],
    "memory_delete_page": ["path", "expected_page_id"],
    "memory_feedback": ["path", "signal", "reason"],
    "memory_handoff_begin": ["summary", "next_steps", "open_questions", "shared"],
    "memory_handoff_list": ["status", "limit"],
    "memory_handoff_accept": ["handoff_id"],
    "memory_handoff_cancel": ["handoff_id"],
    "memory_read_session_observations": ["session_id", "before_id", "limit"],
    "memory_status": ["limit"],
    "memory_briefing": [],
}
WIRE_VALUES = st.one_of(
    JSON,
    st.sampled_from(["decisions/db.md", "../pinned/decisions/db.md", "append", "global"]),
    PATHS.map("/".join),
)


PAGE_PATH = st.one_of(
    st.sampled_from(["decisions/db.md", "notes/x.md", "../pinned/decisions/db.md"]),
    st.tuples(PATHS, st.sampled_from([".md", ".md", ""])).map(
        lambda t: unquote("/".join(t[0])) + t[1]
    ),
)
TYPED: dict[str, st.SearchStrategy[Any]] = {
    "path": PAGE_PATH,
    "body": st.one_of(TEXT, FRONTMATTER),
    "content": TEXT,
    "summary": TEXT,
    "tags": LISTS,
    "entities": LISTS,
    "next_steps": LISTS,
    "open_questions": LISTS,
    "shared": LISTS,
    "scopes": LISTS,
    "op": st.sampled_from(["append", "append_to_section", "add_section", "replace_section", "x"]),
    "status": st.sampled_from(["open", "any", "claimed", "bogus"]),
    "signal": st.sampled_from(["helpful", "wrong", "meh"]),
    "scope": st.sampled_from(["project", "global", "elsewhere"]),
    "expires_at": st.one_of(TEXT, st.sampled_from(["2030-01-01", "2030-01-01T00:00:00"])),
}
REQUIRED = {
    "memory_write_page": ("path", "body"),
    "memory_patch_page": ("path", "expected_page_id", "op", "content"),
    "memory_delete_page": ("path",),
    "memory_feedback": ("path", "signal"),
    "memory_handoff_begin": ("summary",),
    "memory_handoff_cancel": ("handoff_id",),
}


def value_for(key: str) -> st.SearchStrategy[Any]:
    typed = TYPED.get(key, INTS if key.endswith(("_id", "limit", "version", "level")) else TEXT)
    return st.one_of(typed, typed, WIRE_VALUES)


def tool_call() -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    def args_for(name: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
        keys = [*TOOLS[name], "workspace", "project", "junk"]
        picked = st.lists(st.sampled_from(keys), unique=True, max_size=4)
        return picked.flatmap(
            lambda chosen: st.fixed_dictionaries(
                {key: value_for(key) for key in {*chosen, *REQUIRED.get(name, ())}}
            )
        ).map(lambda args: (name, {**args, "project": _not_pinned(args.get("project"))}))

    return st.sampled_from(sorted(TOOLS)).flatmap(args_for)


def _not_pinned(project: Any) -> Any:
    return "fuzz" if project in (None, PROJECT) else project


_INTERNAL = re.compile(r"Error executing tool|internal error", re.IGNORECASE)


def test_mcp_tool_arguments_survive_random_json_rpc(client: httpx.Client) -> None:
    headers = {**JSON_HEADERS, "accept": "application/json, text/event-stream"}

    @fuzz(250)
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

        @fuzz(120)
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


@dataclass(frozen=True)
class Outcome:
    code: int | None  # the JSON-RPC error code, None for a tool result
    text: str


class HeldClient:
    """One real MCP client session, held open on its own event loop for many calls."""

    def __init__(self, server: ServerProcess, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.client: Client | None = None
        self.stop: asyncio.Event | None = None

    def __enter__(self) -> HeldClient:
        self.thread.start()
        ready = threading.Event()
        self.held = asyncio.run_coroutine_threadsafe(self._hold(ready), self.loop)
        assert ready.wait(30), "the MCP client did not connect"
        return self

    async def _hold(self, ready: threading.Event) -> None:
        self.stop = asyncio.Event()
        async with connect(self.server) as client:
            self.client = client
            ready.set()
            await self.stop.wait()

    def call(self, name: str, args: dict[str, Any]) -> Outcome:
        assert self.client is not None
        future = asyncio.run_coroutine_threadsafe(
            self.client.call_tool(name, encodable(args)), self.loop
        )
        try:
            result = future.result(self.timeout)
        except MCPError as exc:
            return Outcome(exc.code, str(exc))
        except FutureTimeout:
            pytest.fail(f"no MCP answer within {self.timeout} s: {name} {args!r:.300}")
        return Outcome(None, json.dumps(result.structured_content)[:2000])

    def __exit__(self, *exc: object) -> None:
        if self.stop is not None:
            self.loop.call_soon_threadsafe(self.stop.set)
        self.held.result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(30)
        self.loop.close()


def encodable(value: Any) -> Any:
    """What a real client can send at all: it cannot encode a lone surrogate."""
    if isinstance(value, str):
        return value.encode("utf-8", "replace").decode("utf-8")
    if isinstance(value, dict):
        return {encodable(k): encodable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [encodable(v) for v in value]
    return value
