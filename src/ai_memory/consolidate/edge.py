"""What answers, rerank and explore share at the query's edge: a cap on calls in flight,
and the one way a provider's failure becomes a reason the local result stands.

A search never waits for a provider slot: when the cap is reached the caller gets the
local order (or no answer) at once, with ``busy`` as the reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from ai_memory.core.errors import LlmBadAnswer, LlmUnavailable

T = TypeVar("T")


class Withheld(Exception):
    """Why a provider's result is not used: a short ``reason`` code and a sentence."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason
        self.detail = detail

    def to_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "detail": self.detail}


@dataclass
class Slots:
    """Provider calls in flight from the query edge; one per server surface."""

    in_use: int = 0

    @asynccontextmanager
    async def take(self, limit: int) -> AsyncIterator[None]:
        if self.in_use >= limit:
            raise Withheld("busy", f"{limit} provider calls are already in flight")
        self.in_use += 1
        try:
            yield
        finally:
            self.in_use -= 1


async def bounded(
    call: Callable[[], Awaitable[T]], slots: Slots, limit: int, timeout_s: float
) -> T:
    """``call()`` within a slot and a time limit; every failure becomes :class:`Withheld`."""
    async with slots.take(limit):
        try:
            async with asyncio.timeout(timeout_s):
                return await call()
        except TimeoutError:
            raise Withheld(
                "timeout", f"the provider did not answer within {timeout_s:g} s"
            ) from None
        except LlmUnavailable as exc:
            raise Withheld("provider_unavailable", exc.message) from None
        except LlmBadAnswer as exc:
            raise Withheld("bad_answer", exc.message) from None


def no_provider() -> Withheld:
    return Withheld("no_provider", "no [llm] provider is configured")


def shown_pages(data: dict[str, Any]) -> list[int]:
    """The current page versions an answer shows: what reinforcement counts as read."""
    hits = [*data["hits"], *data.get("global_hits", [])]
    return [hit["page_id"] for hit in hits if not hit.get("superseded")]
