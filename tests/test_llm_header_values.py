"""A key or an extra header HTTP cannot carry (a line break, a control or non-ASCII
character) stops start-up with a config error naming where it came from, never the
value: it is not sent, not a traceback, not a transient failure at the first call."""

from __future__ import annotations

from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.core.errors import ConfigError
from ai_memory.llm.build import build_chat
from ai_memory.llm.remote_embeddings import RemoteEmbedder

BAD_KEYS = ["sk-SECRET\nX-Evil: 1", "sk-SECRET\x01", "sk-SECRETé", "sk-SECRET\rX"]


@pytest.mark.parametrize("key", BAD_KEYS)
def test_a_key_http_cannot_carry_fails_start_up_without_showing_it(
    tmp_path: Path, key: str
) -> None:
    env = {
        "AI_MEMORY_LLM__PROVIDER": "openai",
        "AI_MEMORY_LLM__MODEL": "m",
        "OPENAI_API_KEY": key,
    }
    with pytest.raises(ConfigError, match="OPENAI_API_KEY") as raised:
        build_chat(Config.load(tmp_path, env=env), env)
    assert "SECRET" not in raised.value.message


@pytest.mark.parametrize("key", BAD_KEYS)
def test_an_embeddings_key_http_cannot_carry_fails_start_up(tmp_path: Path, key: str) -> None:
    env = {
        "AI_MEMORY_EMBEDDINGS__PROVIDER": "openai-compat",
        "AI_MEMORY_EMBEDDINGS__BASE_URL": "http://127.0.0.1:9/v1",
        "AI_MEMORY_EMBEDDINGS__MODEL": "e",
        "AI_MEMORY_EMBEDDINGS__DIM": "8",
        "AI_MEMORY_EMBEDDINGS__API_KEY_ENV": "EMBED_KEY",
        "EMBED_KEY": key,
    }
    with pytest.raises(ConfigError, match="EMBED_KEY") as raised:
        RemoteEmbedder.from_settings(Config.load(tmp_path, env=env).embeddings, env)
    assert "SECRET" not in raised.value.message


@pytest.mark.parametrize(
    "headers",
    ['{"X-Team": "caf\\u00e9"}', '{"X-Team": "a\\nX-Evil: 1"}', '{"Bad Name": "x"}', '{"": "x"}'],
)
@pytest.mark.parametrize("where", ["AI_MEMORY_LLM__EXTRA_HEADERS", "AI_MEMORY_LLM_FALLBACKS"])
def test_an_extra_header_http_cannot_carry_is_a_config_error(
    tmp_path: Path, headers: str, where: str
) -> None:
    env = {"AI_MEMORY_LLM__PROVIDER": "openai-compat", "AI_MEMORY_LLM__MODEL": "m"}
    env["AI_MEMORY_LLM__BASE_URL"] = "http://127.0.0.1:9/v1"
    if where == "AI_MEMORY_LLM_FALLBACKS":
        env[where] = '[{"provider": "openai-compat", "model": "m2", "base_url": '
        env[where] += f'"http://127.0.0.1:9/v1", "extra_headers": {headers}}}]'
    else:
        env[where] = headers
    with pytest.raises(ConfigError, match="extra_headers"):
        build_chat(Config.load(tmp_path, env=env), env)


def test_a_plain_key_and_header_still_build(tmp_path: Path) -> None:
    env = {
        "AI_MEMORY_LLM__PROVIDER": "openai",
        "AI_MEMORY_LLM__MODEL": "m",
        "AI_MEMORY_LLM__EXTRA_HEADERS": '{"X-Team": "core team/1"}',
        "OPENAI_API_KEY": "sk-proj_AZaz09-._~+/=",
    }
    assert build_chat(Config.load(tmp_path, env=env), env) is not None
