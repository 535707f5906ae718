"""Hypothesis feeds /hook random and malformed input: no 5xx, and only sanitized text is stored."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from ai_memory.config import Config
from ai_memory.hooks.sanitize import BODY_CAP, Sanitizer
from ai_memory.maintenance.init import initialise
from tests.hooks_support import app_client

FUZZ = settings(
    max_examples=2500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,
    database=None,
)
KEYS = ["event", "agent", "cwd", "workspace", "project", "session_id", "ingest_key", "junk"]
EVENTS = ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "BeforeAgent", "AfterTool"]
FIELDS = [
    "prompt",
    "tool_name",
    "tool_input",
    "tool_response",
    "last_assistant_message",
    "message",
    "reason",
    "session_id",
    "cwd",
    "hook_event_name",
    "compact_summary",
]
SECRETISH = st.sampled_from(
    [
        "sk-abcdefghijklmnopqrstu",
        "AKIAABCDEFGHIJKLMNOP",
        "password=hunter22",
        "\x1b[31m",
        "Bearer abcdefghij",
        "ghp_abcdefghijklmnopqrstuvwxyz",
        "\x00",
        "\ud800",
        "é" * 3,
    ]
)
TEXT = st.one_of(st.text(max_size=60), SECRETISH, st.text(max_size=30).map(lambda t: t * 400))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT,
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=8,
)
RANDOM_PARAMS = st.dictionaries(
    st.sampled_from(KEYS),
    st.one_of(st.text(max_size=40), st.sampled_from(EVENTS), st.just("shop")),
    max_size=7,
)
VALID_PARAMS = st.fixed_dictionaries(
    {
        "project": st.just("shop"),
        "agent": st.sampled_from(["claude-code", "codex", "gemini", "cursor", "x"]),
        "event": st.sampled_from(EVENTS) | st.text(max_size=20),
    },
    optional={
        "session_id": st.from_regex(r"[A-Za-z0-9_-]{1,12}", fullmatch=True),
        "ingest_key": st.from_regex(r"[A-Za-z0-9_-]{1,20}", fullmatch=True),
        "cwd": st.text(max_size=30),
    },
)
PARAMS = st.one_of(
    VALID_PARAMS,
    VALID_PARAMS,
    RANDOM_PARAMS,
    st.tuples(VALID_PARAMS, RANDOM_PARAMS).map(lambda t: {**t[0], **t[1]}),
)


@pytest.fixture
def client(tmp_path: Path) -> Iterator[tuple[TestClient, Path]]:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    with app_client(root) as test_client:
        yield test_client, root


def fuzz_json(client: TestClient) -> None:
    @FUZZ
    @given(params=PARAMS, body=st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6) | JSON)
    def post(params: dict[str, str], body: Any) -> None:
        response = client.post("/hook", params=params, content=json.dumps(body).encode())
        assert response.status_code in (202, 400, 422, 429), response.text
        assert "error" in response.json() or response.status_code == 202

    post()


def fuzz_bytes(client: TestClient) -> None:
    @FUZZ
    @given(params=PARAMS, raw=st.binary(max_size=300))
    def post(params: dict[str, str], raw: bytes) -> None:
        response = client.post("/hook", params=params, content=raw)
        assert response.status_code in (202, 400, 422, 429), response.text

    post()


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
TOOL_EVENT = {"project": "shop", "agent": "claude-code", "session_id": "tools"}
SECRETS = (
    "sk-abcdefghijklmnopqrstu",
    "AKIAABCDEFGHIJKLMNOP",
    "hunter22",
    "ghp_abcdefghijklmnopqrstuvwxyz",
)


@pytest.mark.slow
def test_fuzzed_hooks_never_break_the_server_and_store_only_sanitized_text(
    client: tuple[TestClient, Path],
) -> None:
    """One test: the check sees what this test's own fuzzing stored, in any test order."""
    for name in [*SECRETS[:2], SECRETS[3], "Bash", "password=hunter22", "\x1b[31mEdit\x00"]:
        body = {"tool_name": name, "tool_input": {"command": "ls"}}
        response = client[0].post("/hook", params={**TOOL_EVENT, "event": "PostToolUse"}, json=body)
        assert response.status_code == 202, response.text
    fuzz_json(client[0])
    fuzz_bytes(client[0])
    conn = sqlite3.connect(client[1] / "db" / "memory.sqlite")
    try:
        stored = conn.execute("SELECT body, meta, tool_name FROM observations").fetchall()
        fts = conn.execute("SELECT count(*) FROM observations_fts").fetchone()[0]
    finally:
        conn.close()
    assert len(stored) > 1000
    assert fts == len(stored)
    assert any(tool for _, _, tool in stored)
    sanitizer = Sanitizer()
    for body, meta, tool in stored:
        assert len(body.encode()) <= 2 * BODY_CAP
        assert not _CONTROL.search(body), body
        assert "\x1b" not in body and "\x1b" not in meta
        assert sanitizer.redact(body) == body, body
        assert tool is None or (sanitizer.redact(tool) == tool and not _CONTROL.search(tool))
        for secret in SECRETS:
            assert secret not in body and secret not in meta
            assert tool is None or secret not in tool
        json.loads(meta)
