"""With no LLM provider configured, every MCP tool answers exactly as before the LLM layer.

The golden transcript was produced by the code before the LLM layer existed (commit
9570d06) driving the same script against a real server over a real MCP client. Only
what varies from run to run is normalised, in the raw answer text so that everything
else is compared byte for byte:

* timestamps (RFC 3339 / ISO 8601 date-times, and ``YYYY-MM-DD`` dates that are today),
* git commit ids (40 hex digits),
* the server's temporary data directory,
* timings (numeric values of keys named ``ms`` or ending in ``_ms``),
* the number in ``"schema_version"``: it counts migrations, which other features add
  without changing any answer.

Page, version and handoff ids are not normalised: they are SQL row ids and the script
fixes them. Regenerate with ``AI_MEMORY_TEST_WRITE_GOLDEN=1`` (only on code known good).
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import MCPError

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.absent_identity_steps import HOOK_EVENTS, STEPS, Ref
from tests.conftest import ServerProcess
from tests.mcp_support import connect

GOLDEN = Path(__file__).parent / "golden" / "mcp_no_provider.jsonl"
# Tools added with the LLM layer; every other listed tool must be in the golden.
LLM_TOOLS = {"memory_consolidate", "memory_auto_improve", "memory_explore"}

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?(?![\d:])")
SCHEMA = re.compile(r'("schema_version":)\d+')
COMMIT = re.compile(r"\b[0-9a-f]{40}\b")
TIMING = re.compile(r'("(?:[a-z_]+_)?ms"\s*:\s*)-?\d+(\.\d+)?(e-?\d+)?')


def _resolve(value: Any, answers: dict[str, Any]) -> Any:
    if isinstance(value, Ref):
        found = answers[value.step]
        found = found.get("handoff", found) if value.key == "id" else found
        return found[value.key]
    return value


def normalise(text: str, data_dir: Path) -> str:
    """The answer text with only what varies run to run replaced (see the module doc)."""
    today = datetime.now(UTC).date().isoformat()
    text = text.replace(str(data_dir), "<data-dir>")
    text = TIMESTAMP.sub("<time>", text)
    text = text.replace(today, "<today>")
    text = COMMIT.sub("<commit>", text)
    text = SCHEMA.sub(r"\1<n>", text)
    return TIMING.sub(r"\1<ms>", text)


async def _transcript(srv: ServerProcess) -> tuple[list[dict[str, Any]], set[str]]:
    lines: list[dict[str, Any]] = []
    answers: dict[str, Any] = {}
    async with connect(srv) as client:
        listed = {tool.name for tool in (await client.list_tools()).tools}
        for label, tool, raw in STEPS:
            args = {key: _resolve(value, answers) for key, value in raw.items()}
            try:
                result = await client.call_tool(tool, args)
            except MCPError as exc:
                text = json.dumps({"code": exc.code, "message": exc.message, "data": exc.data})
                lines.append({"step": label, "tool": tool, "kind": "protocol-error", "text": text})
                continue
            text = result.content[0].text  # type: ignore[union-attr]
            answers[label] = result.structured_content
            kind = "error" if result.is_error else "result"
            lines.append({"step": label, "tool": tool, "kind": kind, "text": text})
    for line in lines:
        line["text"] = normalise(line["text"], srv.data_dir)
    return lines, listed


@pytest.fixture(scope="module")
def transcript(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[list[dict[str, Any]], set[str]]]:
    root = tmp_path_factory.mktemp("golden") / "data"
    initialise(Config.load(root, {}))
    srv = ServerProcess(root).start()
    try:
        with srv.client() as http:
            for event, body in HOOK_EVENTS:
                params = {"workspace": "default", "project": "gold", "agent": "claude-code"}
                stored = http.post(
                    "/hook", params={**params, "event": event, "session_id": "gold-1"}, json=body
                )
                assert stored.status_code == 202
        yield asyncio.run(_transcript(srv))
    finally:
        srv.stop()


def test_every_tool_answers_byte_for_byte_as_before_the_llm_layer(
    transcript: tuple[list[dict[str, Any]], set[str]],
) -> None:
    lines, _ = transcript
    if os.environ.get("AI_MEMORY_TEST_WRITE_GOLDEN") == "1":
        GOLDEN.write_text("".join(json.dumps(line) + "\n" for line in lines))
    golden = [json.loads(line) for line in GOLDEN.read_text().splitlines()]
    assert [line["step"] for line in lines] == [line["step"] for line in golden]
    for got, want in zip(lines, golden, strict=True):
        assert got == want, _diff(got, want)


def _diff(got: dict[str, Any], want: dict[str, Any]) -> str:
    """Where two answers part, as a unified diff of their comma-split text."""
    lines = [f"{line['kind']}\n" + line["text"].replace(",", ",\n") for line in (want, got)]
    diff = difflib.unified_diff(*(text.splitlines() for text in lines), "golden", "now", n=1)
    return f"step {got['step']} ({got['tool']}):\n" + "\n".join(diff)


def test_the_golden_covers_every_tool_but_the_llm_ones(
    transcript: tuple[list[dict[str, Any]], set[str]],
) -> None:
    _, listed = transcript
    covered = {tool for _, tool, _ in STEPS}
    assert covered <= listed
    assert listed - covered <= LLM_TOOLS
