"""A batch's items share their checked parameters, and each still gets its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_memory.core.errors import InvalidInput
from ai_memory.hooks.ingest import ParamsMemo, parse_event
from ai_memory.hooks.sanitize import Sanitizer

SANITIZER = Sanitizer()


def items(checkout: Path) -> list[tuple[dict[str, object], dict[str, object]]]:
    body = {"hook_event_name": "UserPromptSubmit", "prompt": "hello"}
    return [
        ({"project": "one", "agent": "codex", "session_id": "s1"}, body),
        ({"project": "two", "agent": "codex", "session_id": "s1"}, body),
        ({"project": "one", "agent": "gemini-cli", "session_id": "s2"}, body),
        ({"project": "one", "workspace": "w2", "session_id": "s3"}, body),
        ({"project": "one", "session_id": "s4"}, {**body, "cwd": str(checkout)}),
        ({"project": "one", "session_id": "s4", "cwd": "/elsewhere"}, body),
        ({"cwd": str(checkout), "session_id": "s5"}, body),
        ({"project": "one", "agent": "codex", "session_id": "s1"}, body),
    ]


def test_each_item_parses_as_it_would_alone(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / ".ai-memory.toml").write_text('project = "marked"\n')
    memo: ParamsMemo = {}
    for params, body in items(checkout):
        alone = parse_event(params, body, SANITIZER, today="2026-01-01")  # type: ignore[arg-type]
        shared = parse_event(params, body, SANITIZER, today="2026-01-01", memo=memo)  # type: ignore[arg-type]
        assert shared == alone
    assert len(memo) == 7  # the last item repeats the first one's parameters
    scopes = {str(parse_event(p, b, SANITIZER, memo=memo).scope) for p, b in items(checkout)}  # type: ignore[arg-type]
    assert scopes == {"default/one", "default/two", "w2/one", "default/marked"}


def test_a_parameter_that_is_not_text_is_refused_with_a_memo_too() -> None:
    memo: ParamsMemo = {}
    with pytest.raises(InvalidInput, match="agent must be a string"):
        parse_event({"project": "one", "agent": ["x"]}, {}, SANITIZER, memo=memo)  # type: ignore[dict-item]
    with pytest.raises(InvalidInput, match="not a valid agent name"):
        parse_event({"project": "one", "agent": "bad agent"}, {}, SANITIZER, memo=memo)
    assert memo == {}
