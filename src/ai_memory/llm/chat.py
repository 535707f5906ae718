"""What every use of a provider sees: one structured call, validated, or a typed error.

Consolidation, the learning loop, answers and rerank depend on :class:`Chat` alone;
which provider, fallbacks, circuit breakers and credentials stand behind it is the
chain's business (``llm.chain``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar

from pydantic import BaseModel

Task = Literal["consolidation", "review", "answer", "rerank", "explore", "test"]

Answer = TypeVar("Answer", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Prompt:
    """``system`` holds the stable instructions and leads, so providers that cache
    prompt prefixes can reuse it; ``user`` holds what changes per call (fenced data)."""

    system: str
    user: str
    max_tokens: int = 2048


class Chat(Protocol):
    async def structured(self, task: Task, prompt: Prompt, schema: type[Answer]) -> Answer:
        """The provider's answer validated against ``schema``.

        Raises :class:`~ai_memory.core.errors.LlmBadAnswer` for a malformed, truncated
        or empty answer and :class:`~ai_memory.core.errors.LlmUnavailable` when no
        candidate of the task's chain could answer.
        """
        ...

    def health(self) -> list[dict[str, Any]]:
        """Per candidate: provider, model, last success, last error class, circuit state."""
        ...

    async def aclose(self) -> None: ...
