"""A tiny structured call to every candidate, for ``ai-memory llm-test`` and operators.

Each candidate is asked on its own (not through its chain), so a working fallback
cannot hide a broken primary.
"""

from __future__ import annotations

import time
from typing import Any

from pydantic import BaseModel

from ai_memory.core.errors import AiMemoryError
from ai_memory.llm.chain import Chain, LlmChat
from ai_memory.llm.chat import Prompt

PING = Prompt(
    system="You check that structured output works. Answer only with the JSON asked for.",
    user='Answer with {"ok": true, "word": "pong"}.',
    max_tokens=256,
)


class Pong(BaseModel):
    ok: bool
    word: str


async def check_candidates(chat: LlmChat) -> list[dict[str, Any]]:
    """One result per distinct candidate: ok, the time taken, or the error's code and message."""
    results = []
    for candidate in chat.candidates():
        alone = Chain([candidate], max_concurrency=1, wait_max_s=0)
        started = time.perf_counter()
        result: dict[str, Any] = {
            "provider": candidate.provider.name,
            "model": candidate.provider.model,
            "tasks": list(candidate.tasks),
        }
        try:
            await alone.structured(PING, Pong)
        except AiMemoryError as exc:
            result.update(ok=False, error=exc.code, message=exc.message)
        else:
            result.update(ok=True)
        result["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 1)
        results.append(result)
    return results
