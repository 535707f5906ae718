"""What every provider shares: one POST, its failures sorted into transient or not.

A provider returns the answer's JSON text; validating it is the chain's job, so
every provider fails the same way on a bad answer.
"""

from __future__ import annotations

import json
import ssl
from abc import ABC, abstractmethod
from typing import Any

import httpx

from ai_memory.config_llm import LlmCandidate
from ai_memory.core.errors import LlmBadAnswer
from ai_memory.llm.capped import aread_capped, too_large
from ai_memory.llm.chat import Prompt
from ai_memory.llm.failures import Rejected, Transient, is_transient_status, retry_after


class Provider(ABC):
    default_base_url = ""

    def __init__(
        self,
        candidate: LlmCandidate,
        key: str,
        user_agent: str,
        extra_headers: dict[str, str],
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.candidate = candidate
        self.name = candidate.provider
        self.model = candidate.model
        self.base_url = (candidate.base_url or self.default_base_url).rstrip("/")
        headers = {**extra_headers, **candidate.extra_headers, "User-Agent": user_agent}
        headers.update(self.auth_headers(key))
        self.client = httpx.AsyncClient(
            headers=headers,
            timeout=httpx.Timeout(candidate.timeout_s),
            follow_redirects=False,
            verify=tls or httpx.create_ssl_context(),
        )

    @property
    def label(self) -> str:
        return f"{self.name} {self.model}"

    @abstractmethod
    def auth_headers(self, key: str) -> dict[str, str]: ...

    @abstractmethod
    async def answer_json(self, prompt: Prompt, schema: dict[str, Any]) -> str:
        """The answer as JSON text, or Transient / Rejected / LlmBadAnswer."""

    async def post(self, url: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            async with self.client.stream("POST", url, json=body) as response:
                status = response.status_code
                if status >= 400:  # the error body is never read: it is not shown anyway
                    message = f"{self.label}: HTTP {status}"
                    if is_transient_status(status):
                        after = retry_after(response.headers.get("retry-after"))
                        raise Transient(f"http_{status}", message, after)
                    raise Rejected(f"http_{status}", message)
                raw = await aread_capped(response)
        except httpx.DecodingError:
            raise self.bad("the response does not decode (its Content-Encoding)") from None
        except httpx.TimeoutException:
            raise Transient("timeout", f"{self.label}: timed out") from None
        except httpx.TransportError as exc:
            kind = type(exc).__name__
            raise Transient("connection", f"{self.label}: {kind}") from None
        if raw is None:
            raise self.bad(too_large())
        try:
            payload = json.loads(raw)
        except ValueError:
            raise LlmBadAnswer(f"{self.label}: the response is not JSON") from None
        if not isinstance(payload, dict):
            raise LlmBadAnswer(f"{self.label}: the response is not a JSON object")
        return payload

    def bad(self, why: str) -> LlmBadAnswer:
        return LlmBadAnswer(f"{self.label}: {why}", provider=self.name, model=self.model)

    async def aclose(self) -> None:
        await self.client.aclose()
