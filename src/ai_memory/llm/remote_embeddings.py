"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint instead of the local model.

Ollama, vLLM, LM Studio, llama.cpp and OpenAI itself answer the same request. The
vectors are stored like local ones, tagged with this provider, model and dimension,
so switching between the two makes the old vectors stale rather than mixed. The key
is read once when the embedder is built; a missing one fails start-up.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from typing import Any

import httpx

from ai_memory import __version__
from ai_memory.config import EmbeddingsSettings
from ai_memory.core.errors import ConfigError, Unavailable
from ai_memory.llm.capped import read_capped, too_large
from ai_memory.llm.credentials import check_key

PROVIDER = "openai-compat"


class RemoteEmbedder:
    provider = PROVIDER

    def __init__(self, settings: EmbeddingsSettings, key: str) -> None:
        try:
            import numpy
        except ImportError:
            raise ConfigError("remote embeddings need numpy: pip install numpy") from None
        self.np: Any = numpy
        self.model = settings.model
        self.dim = settings.dim
        self.batch_size = settings.batch_size
        self.query_prefix = settings.query_prefix
        self.document_prefix = settings.document_prefix
        headers = {"User-Agent": f"ai-memory/{__version__}"}
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.url = settings.base_url.rstrip("/") + "/embeddings"
        self.timeout_s = settings.timeout_s
        self.client = httpx.Client(headers=headers, timeout=settings.timeout_s)

    @classmethod
    def from_settings(
        cls, settings: EmbeddingsSettings, env: Mapping[str, str] | None = None
    ) -> RemoteEmbedder:
        env = os.environ if env is None else env
        key = ""
        if settings.api_key_env:
            key = env.get(settings.api_key_env, "").strip()
            if not key:
                raise ConfigError(
                    f"[embeddings] environment variable {settings.api_key_env} is not set; "
                    "it must hold the API key"
                )
            check_key(key, f"[embeddings] environment variable {settings.api_key_env}")
        return cls(settings, key)

    def embed(self, texts: list[str]) -> Any:
        """One L2-normalised float32 row per page chunk, ``batch_size`` texts per request."""
        rows = [self.np.zeros((0, self.dim), dtype=self.np.float32)]
        for start in range(0, len(texts), self.batch_size):
            batch = [self.document_prefix + t for t in texts[start : start + self.batch_size]]
            rows.append(self._request(batch))
        return self.np.vstack(rows)

    def embed_query(self, text: str) -> Any:
        result = self._request([self.query_prefix + text])[0]
        return result

    def _request(self, texts: list[str]) -> Any:
        deadline = time.monotonic() + self.timeout_s
        try:
            with self.client.stream(
                "POST", self.url, json={"model": self.model, "input": texts}
            ) as response:
                if response.status_code >= 400:
                    raise Unavailable(f"embeddings service: HTTP {response.status_code}")
                raw = read_capped(response, deadline)
        except httpx.HTTPError as exc:
            raise Unavailable(f"embeddings service: {type(exc).__name__}") from None
        except TimeoutError:
            raise Unavailable(
                f"embeddings service: no whole answer within {self.timeout_s:g} s"
            ) from None
        if raw is None:
            raise Unavailable(f"embeddings service: {too_large()}")
        try:
            data = sorted(json.loads(raw)["data"], key=lambda d: d["index"])
            matrix = self.np.array([d["embedding"] for d in data], dtype=self.np.float32)
        except (ValueError, KeyError, TypeError):
            raise Unavailable("embeddings service: the answer is not an embeddings list") from None
        if matrix.shape != (len(texts), self.dim):
            raise ConfigError(
                f"embeddings service answered {matrix.shape[-1] if matrix.ndim == 2 else '?'}"
                f"-dimensional vectors for {len(matrix)} of {len(texts)} texts; "
                f"[embeddings] dim is {self.dim}"
            )
        norms = self.np.linalg.norm(matrix, axis=1, keepdims=True)
        return matrix / self.np.maximum(norms, 1e-12)

    def close(self) -> None:
        self.client.close()
