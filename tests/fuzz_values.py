"""Hypothesis strategies for the API fuzz suite: hostile text, ids, paths, page bodies,
hook events and MCP tool calls, and the two ways a hostile client spells them."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote, unquote

from hypothesis import strategies as st

from tests.pinned_pages import PROJECT

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
        ).map(lambda args: (name, {**args, "project": not_pinned(args.get("project"))}))

    return st.sampled_from(sorted(TOOLS)).flatmap(args_for)


def not_pinned(project: Any) -> Any:
    return "fuzz" if project in (None, PROJECT) else project
