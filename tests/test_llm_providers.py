"""Each provider's wire format against the fake service: structured output and its failures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel

from ai_memory.core.errors import LlmBadAnswer, LlmUnavailable
from ai_memory.llm.schema import answer_schema, gemini_schema
from tests.fake_llm import FakeLlm, answer, error, fake_llm, truncated
from tests.llm_support import Note, ask, chat_from, llm_env, run

__all__ = ["fake_llm"]

KEYS = {
    "OPENAI_API_KEY": "sk-openai-secret",
    "ANTHROPIC_API_KEY": "sk-ant-secret",
    "GEMINI_API_KEY": "gm-secret",
}


def provider_env(provider: str, fake: FakeLlm) -> dict[str, str]:
    url = fake.gemini_url if provider == "gemini" else fake.openai_url
    return llm_env(provider, url, **KEYS)


PROVIDERS = ["openai-compat", "openai", "anthropic", "gemini"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_structured_answer_is_validated(provider: str, fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({"title": "Use WAL", "tags": ["sqlite"]}))
    note = run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))
    assert note == Note(title="Use WAL", tags=["sqlite"])
    sent = fake_llm.requests[0]
    assert sent.headers["user-agent"] == "ai-memory/0.1.0"
    assert "Reply in JSON." in str(sent.body) and "data" in str(sent.body)


def test_openai_compat_asks_for_json_schema(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({"title": "t"}))
    run(ask(chat_from(tmp_path, llm_env("openai-compat", fake_llm.openai_url))))
    request = fake_llm.requests[0]
    assert request.path == "/v1/chat/completions"
    assert "authorization" not in request.headers  # a local server needs no key
    body = request.body
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["schema"]["required"] == ["title"]
    assert body["messages"][0] == {"role": "system", "content": "Reply in JSON."}


def test_openai_sends_its_key(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({"title": "t"}))
    run(ask(chat_from(tmp_path, provider_env("openai", fake_llm))))
    request = fake_llm.requests[0]
    assert request.headers["authorization"] == "Bearer sk-openai-secret"
    assert "max_completion_tokens" in request.body


def test_anthropic_forces_a_tool_call(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({"title": "t"}))
    run(ask(chat_from(tmp_path, provider_env("anthropic", fake_llm))))
    request = fake_llm.requests[0]
    assert request.path == "/v1/messages"
    assert request.headers["x-api-key"] == "sk-ant-secret"
    assert request.headers["anthropic-version"] == "2023-06-01"
    assert request.body["tool_choice"] == {"type": "tool", "name": "answer"}
    assert request.body["tools"][0]["input_schema"]["properties"]["title"]["type"] == "string"
    assert request.body["system"] == "Reply in JSON."


def test_gemini_sends_a_response_schema(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({"title": "t"}))
    run(ask(chat_from(tmp_path, provider_env("gemini", fake_llm))))
    request = fake_llm.requests[0]
    assert request.path == "/v1beta/models/m:generateContent"
    assert request.headers["x-goog-api-key"] == "gm-secret"
    config = request.body["generationConfig"]
    assert config["responseMimeType"] == "application/json"
    assert config["responseSchema"]["type"] == "OBJECT"
    assert config["responseSchema"]["properties"]["tags"] == {
        "type": "ARRAY",
        "items": {"type": "STRING"},
    }


@pytest.mark.parametrize("provider", PROVIDERS)
def test_truncated_answer_is_refused_whole(
    provider: str, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fake_llm.push(truncated('{"title": "cut'))
    with pytest.raises(LlmBadAnswer, match="truncated"):
        run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))


@pytest.mark.parametrize("provider", ["openai-compat", "openai", "gemini"])
def test_malformed_json_is_a_bad_answer(provider: str, fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer('{"title": "unclosed'))
    with pytest.raises(LlmBadAnswer, match="does not match the schema"):
        run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_schema_mismatch_is_a_bad_answer(provider: str, fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({"title": 7, "tags": "x"}))
    with pytest.raises(LlmBadAnswer, match="title"):
        run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_empty_answer_is_a_bad_answer(provider: str, fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(answer({} if provider == "anthropic" else ""))
    with pytest.raises(LlmBadAnswer, match="empty"):
        run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))


def test_anthropic_text_without_tool_call_is_a_bad_answer(
    fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fake_llm.push(answer("I would rather chat."))
    with pytest.raises(LlmBadAnswer, match="no tool call"):
        run(ask(chat_from(tmp_path, provider_env("anthropic", fake_llm))))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_refused_call_is_unavailable_without_its_body(
    provider: str, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fake_llm.push(error(401, "invalid key sk-echoed-secret"))
    with pytest.raises(LlmUnavailable) as raised:
        run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))
    assert "HTTP 401" in raised.value.message
    assert "secret" not in str(raised.value.to_dict())


@pytest.mark.parametrize("provider", PROVIDERS)
def test_rate_limit_with_retry_after_is_waited_out(
    provider: str, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fake_llm.push(error(429, "slow down", retry_after=0), answer({"title": "after the wait"}))
    note = run(ask(chat_from(tmp_path, provider_env(provider, fake_llm))))
    assert note.title == "after the wait" and len(fake_llm.requests) == 2


@pytest.mark.parametrize("provider", PROVIDERS)
def test_server_error_falls_back_to_the_next_provider(
    provider: str, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fallbacks = [{"provider": "openai-compat", "model": "local", "base_url": fake_llm.openai_url}]
    env = provider_env(provider, fake_llm) | {"AI_MEMORY_LLM_FALLBACKS": json.dumps(fallbacks)}
    fake_llm.push(error(529 if provider == "anthropic" else 503), answer({"title": "local"}))
    assert run(ask(chat_from(tmp_path, env))).title == "local"
    assert fake_llm.models() == ["m", "local"]


class Kind(BaseModel):
    name: Literal["decision", "gotcha"]
    since: str | None = None


class Pages(BaseModel):
    pages: list[Kind]
    fixed: Literal["v1"]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_nested_schemas_are_sent_without_references(
    provider: str, fake_llm: FakeLlm, tmp_path: Path
) -> None:
    fake_llm.push(answer({"pages": [{"name": "gotcha", "since": None}], "fixed": "v1"}))
    result = run(ask(chat_from(tmp_path, provider_env(provider, fake_llm)), Pages))
    assert result == Pages(pages=[Kind(name="gotcha")], fixed="v1")
    assert "$ref" not in json.dumps(fake_llm.bodies()[0])


def test_gemini_schema_uses_the_openapi_subset() -> None:
    sent = gemini_schema(answer_schema(Pages))
    item = sent["properties"]["pages"]["items"]
    assert item["properties"]["since"] == {"type": "STRING", "nullable": True}
    assert item["properties"]["name"] == {"type": "STRING", "enum": ["decision", "gotcha"]}
    assert sent["properties"]["fixed"]["enum"] == ["v1"]
    assert sent["propertyOrdering"] == ["pages", "fixed"]
    assert "title" not in json.dumps(sent)
