"""API keys, read once at start-up from the environment variable a candidate names.

Config files hold only the variable's name. A key that is needed but missing fails
start-up with :class:`ConfigError` naming the variable, never on the first call.
"""

from __future__ import annotations

from collections.abc import Mapping

from ai_memory.config_llm import LlmCandidate, header_value_ok
from ai_memory.core.errors import ConfigError

DEFAULT_KEY_ENV = {
    "openai": "OPENAI_API_KEY",
    "anthropic": "ANTHROPIC_API_KEY",
    "gemini": "GEMINI_API_KEY",
}


def key_env(candidate: LlmCandidate) -> str:
    """The variable the key comes from; empty when none is needed (openai-compat)."""
    return candidate.api_key_env or DEFAULT_KEY_ENV.get(candidate.provider, "")


def resolve_key(candidate: LlmCandidate, env: Mapping[str, str]) -> str:
    """The candidate's key, or "" for a local openai-compat server that needs none."""
    name = key_env(candidate)
    if not name:
        return ""
    value = env.get(name, "").strip()
    if not value:
        raise ConfigError(
            f"[llm] {candidate.provider} {candidate.model}: environment variable {name} "
            "is not set; it must hold the API key"
        )
    check_key(value, f"[llm] {candidate.provider} {candidate.model}: environment variable {name}")
    return value


def check_key(value: str, where: str) -> None:
    """ConfigError when HTTP cannot carry the key, naming ``where`` and never the key."""
    if not header_value_ok(value):
        raise ConfigError(
            f"{where} holds a line break, a control or a non-ASCII character; "
            "an API key cannot carry one"
        )
