"""Building the LLM chains once from the settings, keys included, at start-up.

``build_chat`` is the one entry point: ``None`` when ``[llm] provider = "none"``,
otherwise an :class:`LlmChat` whose candidates already hold their keys, so a
missing key or a bad task section is a :class:`ConfigError` now, not at the first call.
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping

import httpx
from pydantic import ValidationError

from ai_memory.config import Config
from ai_memory.config_llm import LlmCandidate, LlmSettings, LlmTaskSettings
from ai_memory.core.errors import ConfigError
from ai_memory.llm.breaker import Breaker
from ai_memory.llm.chain import Candidate, Chain, LlmChat
from ai_memory.llm.credentials import key_env, resolve_key
from ai_memory.llm.providers.anthropic import Anthropic
from ai_memory.llm.providers.base import Provider
from ai_memory.llm.providers.gemini import Gemini
from ai_memory.llm.providers.openai_compat import OpenAI, OpenAICompat

PROVIDERS: dict[str, type[Provider]] = {
    "openai-compat": OpenAICompat,
    "openai": OpenAI,
    "anthropic": Anthropic,
    "gemini": Gemini,
}
TASKS = ("consolidation", "review", "answer", "rerank")

CandidateKey = tuple[str, str, str, str, float, tuple[tuple[str, str], ...]]


def build_chat(config: Config, env: Mapping[str, str] | None = None) -> LlmChat | None:
    """The chains ``config`` describes, or ``None`` with no provider configured."""
    settings = config.llm
    if settings.provider == "none":
        return None
    env = os.environ if env is None else env
    made: dict[CandidateKey, Candidate] = {}
    chains: dict[str, Chain] = {}
    tls = httpx.create_ssl_context()  # loading the CA bundle is the slow part: once
    for task, members in chain_members(config).items():
        candidates = [_candidate(settings, member, env, made, tls) for member in members]
        for candidate in candidates:
            if task not in candidate.tasks:
                candidate.tasks.append(task)
        chains[task] = Chain(candidates, settings.max_concurrency, settings.retry_after_max_s)
    return LlmChat(chains)


def chain_members(config: Config) -> dict[str, list[LlmCandidate]]:
    """Each chain's candidates in order: ``default`` and every configured task section."""
    settings = config.llm
    chains = {"default": [settings.primary(), *config.llm_fallbacks]}
    for task in TASKS:
        section: LlmTaskSettings | None = getattr(settings, task)
        if section is not None:
            chains[task] = task_chain(settings, section, config.llm_fallbacks, task)
    return chains


def task_chain(
    settings: LlmSettings, section: LlmTaskSettings, fallbacks: list[LlmCandidate], task: str
) -> list[LlmCandidate]:
    """``[llm.<task>]``: unset keys come from ``[llm]`` (only while the provider is the
    same); its own ``fallbacks`` replace ``[[llm_fallbacks]]`` when given."""
    provider = section.provider or settings.provider
    same = provider == settings.provider
    if not same and not section.model:
        raise ConfigError(f"[llm.{task}] sets provider {provider}, so it needs model")
    try:
        primary = LlmCandidate(
            provider=provider,
            model=section.model or settings.model,
            base_url=section.base_url or (settings.base_url if same else ""),
            api_key_env=section.api_key_env or (settings.api_key_env if same else ""),
            timeout_s=section.timeout_s or settings.timeout_s,
        )
    except ValidationError as exc:
        raise ConfigError(f"[llm.{task}]: {exc.errors()[0]['msg']}") from None
    return [primary, *(fallbacks if section.fallbacks is None else section.fallbacks)]


def _candidate(
    settings: LlmSettings,
    member: LlmCandidate,
    env: Mapping[str, str],
    made: dict[CandidateKey, Candidate],
    tls: ssl.SSLContext,
) -> Candidate:
    """One candidate per distinct provider/model/URL/key, shared by the chains naming it,
    so a dead service opens one breaker for every task."""
    key: CandidateKey = (
        member.provider,
        member.model,
        member.base_url,
        key_env(member),
        member.timeout_s,
        tuple(sorted(member.extra_headers.items())),
    )
    if key not in made:
        provider = PROVIDERS[member.provider](
            member, resolve_key(member, env), settings.user_agent, settings.extra_headers, tls
        )
        made[key] = Candidate(provider, Breaker(settings.breaker_failures, settings.breaker_open_s))
    return made[key]
