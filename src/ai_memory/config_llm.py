"""The optional LLM sections of the settings: [llm], [[llm_fallbacks]] and what uses them.

Nothing here talks to a provider; the ``llm`` package reads these settings once
the server starts and only when ``[llm] provider`` is not ``none``.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ai_memory import __version__

ProviderName = Literal["openai-compat", "openai", "anthropic", "gemini"]


class Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_default=True, defer_build=True
    )


# Headers the providers set themselves; extra_headers may not override them.
RESERVED_HEADERS = frozenset(
    {
        "authorization",
        "x-api-key",
        "content-type",
        "user-agent",
        "anthropic-version",
        "x-goog-api-key",
    }
)


def _http_url(url: str) -> str:
    if url and not url.startswith(("http://", "https://")):
        raise ValueError(f"base_url {url!r} must start with http:// or https://")
    return url.rstrip("/")


_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_HEADER_VALUE = re.compile(r"^[\x20-\x7e]*$")


def header_value_ok(value: str) -> bool:
    """Whether HTTP can carry ``value`` in a header: printable ASCII, no line break."""
    return _HEADER_VALUE.match(value) is not None


def _refuse_reserved(headers: dict[str, str]) -> dict[str, str]:
    taken = sorted(name for name in headers if name.lower() in RESERVED_HEADERS)
    if taken:
        raise ValueError(f"extra_headers may not set {', '.join(taken)} (ai-memory sets it)")
    for name, value in headers.items():
        if not _HEADER_NAME.match(name):
            raise ValueError(f"extra_headers: {name!r} is not a valid header name")
        if not header_value_ok(value):  # the value may be a secret: never echoed
            raise ValueError(
                f"extra_headers: the value of {name} holds a line break, a control "
                "or a non-ASCII character, which a header cannot carry"
            )
    return headers


class LlmCandidate(Section):
    """One provider and model a chain may call."""

    provider: ProviderName = Field(description="which wire format and service")
    model: str = Field(min_length=1, description="the provider's model name")
    base_url: str = Field(
        "", description="service URL with its version path (required for openai-compat)"
    )
    api_key_env: str = Field(
        "",
        description="name of the environment variable that holds the key (never the key); "
        "empty: OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by provider",
    )
    timeout_s: float = Field(60.0, gt=0, le=600, description="one call's whole time limit")
    extra_headers: dict[str, str] = Field(
        {}, description="headers added to every call (not ones ai-memory sets)"
    )

    @field_validator("extra_headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        return _refuse_reserved(value)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)

    @model_validator(mode="after")
    def _needs_url(self) -> LlmCandidate:
        if self.provider == "openai-compat" and not self.base_url:
            raise ValueError(
                "provider openai-compat needs base_url (e.g. http://127.0.0.1:11434/v1)"
            )
        return self


class LlmTaskSettings(Section):
    """``[llm.<task>]``: a task's own chain. Unset keys inherit from ``[llm]``; its
    ``fallbacks``, when given, replace ``[[llm_fallbacks]]`` for this task."""

    provider: ProviderName | None = Field(None, description="this task's provider")
    model: str = Field("", description="this task's model name")
    base_url: str = Field("", description="this task's service URL")
    api_key_env: str = Field("", description="this task's key variable name")
    timeout_s: float | None = Field(None, gt=0, le=600, description="this task's time limit")
    fallbacks: list[LlmCandidate] | None = Field(
        None, description="this task's fallback chain; unset: [[llm_fallbacks]]"
    )


class LlmSettings(Section):
    provider: Literal["none", "openai-compat", "openai", "anthropic", "gemini"] = Field(
        "none", description="the primary provider; 'none' turns every LLM feature off"
    )
    model: str = Field("", description="the primary provider's model name")
    base_url: str = Field(
        "", description="service URL with its version path (required for openai-compat)"
    )
    api_key_env: str = Field(
        "",
        description="name of the environment variable that holds the key (never the key); "
        "empty: OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by provider",
    )
    timeout_s: float = Field(60.0, gt=0, le=600, description="one call's whole time limit")
    max_concurrency: int = Field(4, ge=1, le=64, description="calls in flight per chain")
    user_agent: str = Field(f"ai-memory/{__version__}", min_length=1, description="User-Agent sent")
    extra_headers: dict[str, str] = Field(
        {}, description="headers added to every call (not ones ai-memory sets)"
    )
    breaker_failures: int = Field(
        3, ge=1, le=100, description="consecutive transient failures that open a circuit"
    )
    breaker_open_s: float = Field(
        30.0, ge=0, le=3600, description="how long an open circuit skips its candidate"
    )
    retry_after_max_s: float = Field(
        2.0, ge=0, le=60, description="a 429's Retry-After up to this is waited out once"
    )
    consolidation: LlmTaskSettings | None = Field(None, description="consolidation's own chain")
    review: LlmTaskSettings | None = Field(None, description="the reviewer's own chain")
    answer: LlmTaskSettings | None = Field(None, description="answers' own chain")
    rerank: LlmTaskSettings | None = Field(None, description="rerank's own chain")

    @field_validator("extra_headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        return _refuse_reserved(value)

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _http_url(value)

    @model_validator(mode="after")
    def _complete(self) -> LlmSettings:
        if self.provider == "none":
            return self
        if not self.model:
            raise ValueError(f"provider {self.provider} needs model")
        if self.provider == "openai-compat" and not self.base_url:
            raise ValueError(
                "provider openai-compat needs base_url (e.g. http://127.0.0.1:11434/v1)"
            )
        return self

    def primary(self) -> LlmCandidate:
        """``[llm]`` as the first candidate of the default chain."""
        return LlmCandidate(
            provider=self.provider,
            model=self.model,
            base_url=self.base_url,
            api_key_env=self.api_key_env,
            timeout_s=self.timeout_s,
        )


class ConsolidationSettings(Section):
    auto: bool = Field(
        False, description="consolidate each session when it ends (needs [llm] provider)"
    )
    multi_page: bool = Field(
        True, description="write concept/decision/gotcha/procedure pages, not only the session's"
    )
    max_pages: int = Field(8, ge=0, le=50, description="durable pages one run may write")
    input_chars: int = Field(
        48_000, ge=2_000, le=1_000_000, description="what of the session and pages is sent"
    )
    related_pages: int = Field(8, ge=0, le=50, description="project pages sent as context")
    prompt_chars: int = Field(
        4_000, ge=0, le=20_000, description="cap on the project's _prompts/consolidation.md"
    )
    max_attempts: int = Field(3, ge=1, le=20, description="tries before a job is failed")
    retry_backoff_s: float = Field(
        30.0, ge=0, le=86_400, description="wait before the first retry; doubles each time"
    )
    lease_s: float = Field(
        900.0, gt=0, le=86_400, description="how long a running job is held by its worker"
    )
    poll_s: float = Field(5.0, gt=0, le=3_600, description="how often the worker looks for jobs")


class LearningSettings(Section):
    """The reviewed learning loop: edits to ``_rules/`` and ``procedures/`` from sessions."""

    require_approval: bool = Field(
        True, description="proposed edits to rules and procedures wait for approval"
    )
    interval_h: float = Field(
        1.0,
        ge=0,
        le=24 * 30,
        description="hours between reviews of new sessions (needs [llm] provider); 0: never",
    )
    max_proposals: int = Field(3, ge=1, le=20, description="most edits one review may propose")
    max_body_chars: int = Field(
        8000, ge=200, le=64000, description="longest page body a proposal may hold"
    )
    input_chars: int = Field(
        24000, ge=2000, le=400000, description="most session text one review reads"
    )
    context_pages: int = Field(
        20, ge=0, le=200, description="most existing rules and procedures shown to the reviewer"
    )


class AnswerSettings(Section):
    """Cited answers, rerank and the explore digest: the provider at the query's edge."""

    rerank: bool = Field(
        False, description="rerank the fused top hits with the provider (needs [llm] provider)"
    )
    rerank_top: int = Field(30, ge=2, le=100, description="fused hits the provider reorders")
    rerank_timeout_s: float = Field(
        5.0, gt=0, le=120, description="rerank's time limit; past it the local order stands"
    )
    answer_hits: int = Field(8, ge=1, le=30, description="top hits an answer is written from")
    hit_chars: int = Field(
        1_500, ge=200, le=20_000, description="characters of each hit's page sent for an answer"
    )
    answer_timeout_s: float = Field(
        30.0, gt=0, le=600, description="an answer's time limit; past it the hits come alone"
    )
    explore_chars: int = Field(
        16_000, ge=1_000, le=200_000, description="characters of the briefing sent for a digest"
    )
    explore_timeout_s: float = Field(
        60.0, gt=0, le=600, description="a digest's time limit; past it the briefing comes"
    )
    max_concurrency: int = Field(
        2, ge=1, le=64, description="answer and rerank calls in flight; more get the local result"
    )
