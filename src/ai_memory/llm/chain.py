"""An ordered chain of candidates behind one :class:`~ai_memory.llm.chat.Chat`.

Each call goes to the first candidate whose circuit is closed; a transient failure
(429, 5xx, timeout, connection error) moves on to the next one, anything else stops
the call: a refused request (400, 401…) would be refused again elsewhere, and a bad
answer is the model's, not the service's. Every chain caps its calls in flight.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from typing import Any

from pydantic import BaseModel, ValidationError

from ai_memory.core.errors import LlmBadAnswer, LlmUnavailable
from ai_memory.llm.breaker import Breaker
from ai_memory.llm.chat import Answer, Prompt, Task
from ai_memory.llm.failures import Rejected, Transient
from ai_memory.llm.providers.base import Provider
from ai_memory.llm.schema import answer_schema

log = logging.getLogger(__name__)


class Candidate:
    """One provider and model with its breaker and what status shows of it."""

    def __init__(self, provider: Provider, breaker: Breaker) -> None:
        self.provider = provider
        self.breaker = breaker
        self.tasks: list[str] = []
        self.calls = 0
        self.failures = 0
        self.last_success_at: str | None = None
        self.last_error: str | None = None
        self.last_error_at: str | None = None

    async def answer_json(self, prompt: Prompt, schema: dict[str, Any], wait_max_s: float) -> str:
        """One call, and one more after a short Retry-After the provider asked for."""
        try:
            return await self._timed(prompt, schema)
        except Transient as exc:
            if exc.retry_after_s is None or exc.retry_after_s > wait_max_s:
                raise
            await asyncio.sleep(exc.retry_after_s)
        return await self._timed(prompt, schema)

    async def _timed(self, prompt: Prompt, schema: dict[str, Any]) -> str:
        self.calls += 1
        try:
            async with asyncio.timeout(self.provider.candidate.timeout_s):
                return await self.provider.answer_json(prompt, schema)
        except TimeoutError:
            raise Transient("timeout", f"{self.provider.label}: timed out") from None

    def succeeded(self) -> None:
        self.breaker.succeeded()
        self.last_success_at = _now()

    def errored(self, kind: str, *, transient: bool) -> None:
        self.failures += 1
        self.last_error = kind
        self.last_error_at = _now()
        if transient:
            self.breaker.failed()
        else:
            self.breaker.released()

    def health(self) -> dict[str, Any]:
        return {
            "provider": self.provider.name,
            "model": self.provider.model,
            "tasks": list(self.tasks),
            "circuit": self.breaker.state,
            "calls": self.calls,
            "failures": self.failures,
            "last_success_at": self.last_success_at,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
        }


class Chain:
    def __init__(
        self, candidates: list[Candidate], max_concurrency: int, wait_max_s: float
    ) -> None:
        self.candidates = candidates
        self.slots = asyncio.Semaphore(max_concurrency)
        self.wait_max_s = wait_max_s
        self.schemas: dict[type[BaseModel], dict[str, Any]] = {}  # built once per model

    async def structured(self, prompt: Prompt, schema: type[Answer]) -> Answer:
        wanted = self.schemas.get(schema)
        if wanted is None:
            wanted = self.schemas[schema] = answer_schema(schema)
        skipped: list[str] = []
        async with self.slots:
            for candidate in self.candidates:
                if not candidate.breaker.allow():
                    skipped.append(f"{candidate.provider.label}: circuit open")
                    continue
                try:
                    text = await candidate.answer_json(prompt, wanted, self.wait_max_s)
                    answer = _validated(candidate, text, schema)
                except Transient as exc:
                    candidate.errored(exc.kind, transient=True)
                    skipped.append(str(exc))
                    log.warning("LLM %s; trying the next candidate", exc)
                    continue
                except Rejected as exc:
                    candidate.errored(exc.kind, transient=False)
                    raise LlmUnavailable(str(exc), reason=exc.kind) from None
                except LlmBadAnswer:
                    candidate.errored("bad_answer", transient=False)
                    raise
                except BaseException:  # cancelled by the caller: free a claimed probe
                    candidate.breaker.abandoned()
                    raise
                candidate.succeeded()
                return answer
        raise LlmUnavailable("no LLM candidate answered: " + "; ".join(skipped), reason="exhausted")


def _validated(candidate: Candidate, text: str, schema: type[Answer]) -> Answer:
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        where = sorted({".".join(str(p) for p in e["loc"]) or "(root)" for e in exc.errors()})
        raise candidate.provider.bad(
            f"the answer does not match the schema ({exc.error_count()} errors at "
            f"{', '.join(where[:5])})"
        ) from None


class LlmChat:
    """The :class:`Chat` the runtime holds: a default chain and any per-task chains."""

    def __init__(self, chains: dict[str, Chain]) -> None:
        self.chains = chains

    def chain(self, task: Task) -> Chain:
        return self.chains.get(task) or self.chains["default"]

    async def structured(self, task: Task, prompt: Prompt, schema: type[Answer]) -> Answer:
        return await self.chain(task).structured(prompt, schema)

    def candidates(self) -> list[Candidate]:
        seen: dict[int, Candidate] = {}
        for chain in self.chains.values():
            for candidate in chain.candidates:
                seen.setdefault(id(candidate), candidate)
        return list(seen.values())

    def health(self) -> list[dict[str, Any]]:
        return [candidate.health() for candidate in self.candidates()]

    async def aclose(self) -> None:
        for candidate in self.candidates():
            await candidate.provider.aclose()


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
