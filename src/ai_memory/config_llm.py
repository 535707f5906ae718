"""The optional LLM sections of the settings: [llm], [[llm_fallbacks]] and what uses them.

Nothing here talks to a provider; the ``llm`` package reads these settings once
the server starts and only when ``[llm] provider`` is not ``none``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

ProviderName = Literal["openai-compat", "openai", "anthropic", "gemini"]


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, validate_default=True)


class LlmCandidate(Section):
    """One provider and model a chain may call."""

    provider: ProviderName = Field(description="which wire format and service")
    model: str = Field(min_length=1, description="the provider's model name")
    base_url: str = Field("", description="service URL (required for openai-compat)")
    api_key_env: str = Field(
        "", description="name of the environment variable that holds the key (never the key)"
    )
    timeout_s: float = Field(60.0, gt=0, le=600, description="one call's whole time limit")


class LlmSettings(Section):
    provider: Literal["none", "openai-compat", "openai", "anthropic", "gemini"] = Field(
        "none", description="the primary provider; 'none' turns every LLM feature off"
    )
    model: str = Field("", description="the primary provider's model name")
    base_url: str = Field("", description="service URL (required for openai-compat)")
    api_key_env: str = Field(
        "", description="name of the environment variable that holds the key (never the key)"
    )
    timeout_s: float = Field(60.0, gt=0, le=600, description="one call's whole time limit")


class ConsolidationSettings(Section):
    auto: bool = Field(
        False, description="consolidate each session when it ends (needs [llm] provider)"
    )


class LearningSettings(Section):
    require_approval: bool = Field(
        True, description="proposed edits to rules and procedures wait for approval"
    )


class AnswerSettings(Section):
    rerank: bool = Field(
        False, description="rerank the fused top hits with the provider (needs [llm] provider)"
    )
