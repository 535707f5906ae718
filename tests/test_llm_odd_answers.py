"""A provider answering JSON its API never had (wrong types where objects, lists or
strings belong) is an ``llm_bad_answer``, never a crash of the feature that asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ai_memory.core.errors import LlmBadAnswer
from tests.fake_llm import FakeLlm, fake_llm, raw
from tests.llm_support import ask, chat_from, llm_env, run

__all__ = ["fake_llm"]

ODD: dict[str, list[Any]] = {
    "gemini": [
        {"candidates": [{"content": "text"}]},
        {"candidates": [{"content": [1, 2]}]},
        {"candidates": [{"content": {"parts": [{"text": 5}]}}]},
        {"candidates": [{"content": {"parts": "text"}}]},
        {"candidates": [{"finishReason": ["STOP"], "content": {"parts": [{"text": "{}"}]}}]},
        {"promptFeedback": "blocked", "candidates": []},
        {"candidates": ["x"]},
    ],
    "openai-compat": [
        {"choices": [{"message": {"content": ["{}"]}}]},
        {"choices": [{"message": "text"}]},
        {"choices": [{"finish_reason": {"a": 1}, "message": {"content": 5}}]},
        {"choices": {"0": {}}},
        [1, 2],
    ],
    "anthropic": [
        {"content": "text"},
        {"content": [{"type": "tool_use", "input": "text"}]},
        {"content": [{"type": "tool_use", "input": [1]}]},
        {"stop_reason": ["max_tokens"], "content": []},
        {"content": [{"type": ["tool_use"]}]},
    ],
}
CASES = [(provider, body) for provider, bodies in ODD.items() for body in bodies]


@pytest.mark.parametrize(("provider", "body"), CASES)
def test_an_answer_of_the_wrong_shape_is_a_bad_answer(
    provider: str, body: Any, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    url = fake_llm.gemini_url if provider == "gemini" else fake_llm.openai_url
    fake_llm.push(raw(body))
    with pytest.raises(LlmBadAnswer):
        run(
            ask(
                chat_from(
                    tmp_path, llm_env(provider, url, ANTHROPIC_API_KEY="k", GEMINI_API_KEY="k")
                )
            )
        )


@pytest.mark.parametrize(
    "body",
    [
        {"promptFeedback": {"blockReason": "SAFETY " + "x" * 5000}},
        {"candidates": [{"finishReason": "OTHER\n" + "x" * 5000}]},
    ],
)
def test_a_reason_code_the_service_sends_is_cut_short_in_the_error(
    body: Any, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fake_llm.push(raw(body))
    with pytest.raises(LlmBadAnswer) as raised:
        run(ask(chat_from(tmp_path, llm_env("gemini", fake_llm.gemini_url, GEMINI_API_KEY="k"))))
    assert len(raised.value.message) < 200 and "\n" not in raised.value.message


def test_an_answer_that_does_not_decode_is_a_bad_answer(fake_llm: FakeLlm, tmp_path: Path) -> None:
    from tests.fake_llm import Reply

    fake_llm.push(Reply(raw={"choices": []}, headers={"Content-Encoding": "gzip"}))
    with pytest.raises(LlmBadAnswer, match="decode"):
        run(ask(chat_from(tmp_path, llm_env("openai-compat", fake_llm.openai_url))))
