"""Building real LLM chains against the fake service, from an environment mapping."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from ai_memory.config import Config
from ai_memory.llm.build import build_chat
from ai_memory.llm.chain import LlmChat

T = TypeVar("T")


class Note(BaseModel):
    title: str
    tags: list[str] = []


def llm_env(provider: str, url: str, model: str = "m", **extra: str) -> dict[str, str]:
    env = {
        "AI_MEMORY_LLM__PROVIDER": provider,
        "AI_MEMORY_LLM__MODEL": model,
        "AI_MEMORY_LLM__BASE_URL": url,
    }
    env.update(extra)
    return env


def chat_from(tmp_path: Path, env: dict[str, str]) -> LlmChat:
    chat = build_chat(Config.load(tmp_path, env=env), env)
    assert chat is not None
    return chat


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


async def ask(chat: LlmChat, schema: type[BaseModel] = Note, task: str = "test") -> Any:
    """One structured call, then the chain's clients closed (each test has its own loop)."""
    from ai_memory.llm.chat import Prompt

    try:
        return await chat.structured(task, Prompt("Reply in JSON.", "data"), schema)  # type: ignore[arg-type]
    finally:
        await chat.aclose()
