"""[llm] settings: env-only configuration, refused headers, keys read once and never shown."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.core.errors import ConfigError, LlmUnavailable
from ai_memory.doctor.context import DoctorContext
from ai_memory.doctor.findings import Severity
from ai_memory.doctor.llm import check_llm
from ai_memory.llm.build import build_chat
from ai_memory.llm.chat import Prompt
from tests.conftest import clean_env, run_cli
from tests.fake_llm import FakeLlm, answer, error, fake_llm
from tests.hooks_support import app_client
from tests.llm_support import Note, ask, chat_from, llm_env, run

__all__ = ["fake_llm"]

SECRET = "sk-test-do-not-leak-4242"
LIGHT = {"ai_memory.llm.embeddings", "ai_memory.llm.chat"}


def test_three_environment_variables_turn_it_on(fake_llm: FakeLlm, tmp_path: Path) -> None:
    env = llm_env("openai-compat", fake_llm.openai_url, model="qwen3")
    config = Config.load(tmp_path, env=env)
    assert (config.llm.provider, config.llm.model) == ("openai-compat", "qwen3")
    fake_llm.push(answer({"title": "on"}))
    assert run(ask(chat_from(tmp_path, env))).title == "on"


def test_no_provider_builds_nothing(tmp_path: Path) -> None:
    assert build_chat(Config.load(tmp_path, env={}), {}) is None


def test_no_provider_never_imports_the_llm_layer(tmp_path: Path) -> None:
    code = (
        "import sys; from ai_memory.config import Config; from ai_memory.server import build_llm\n"
        f"assert build_llm(Config.load({str(tmp_path)!r}, env={{}})) is None\n"
        "import ai_memory.hooks.service, ai_memory.retrieval.search\n"
        "print(sorted(m for m in sys.modules if m.startswith('ai_memory.llm.')))"
    )
    # The local embedder and the Chat protocol are light; nothing that talks to a provider.
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = set(json.loads(proc.stdout.replace("'", '"'))) - LIGHT
    assert loaded == set()


@pytest.mark.parametrize(
    "env",
    [
        {"AI_MEMORY_LLM__PROVIDER": "openai"},  # no model
        {"AI_MEMORY_LLM__PROVIDER": "openai-compat", "AI_MEMORY_LLM__MODEL": "m"},  # no URL
        {"AI_MEMORY_LLM__PROVIDER": "gpt", "AI_MEMORY_LLM__MODEL": "m"},
        {
            "AI_MEMORY_LLM__PROVIDER": "openai-compat",
            "AI_MEMORY_LLM__MODEL": "m",
            "AI_MEMORY_LLM__BASE_URL": "localhost:11434/v1",  # no scheme
        },
        {"AI_MEMORY_LLM_FALLBACKS": json.dumps([{"provider": "openai-compat", "model": "m"}])},
    ],
)
def test_incomplete_settings_fail_loading(tmp_path: Path, env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match="llm"):
        Config.load(tmp_path, env=env)


@pytest.mark.parametrize("header", ["Authorization", "x-api-key", "USER-AGENT", "x-goog-api-key"])
def test_extra_headers_may_not_replace_ours(tmp_path: Path, header: str) -> None:
    (tmp_path / "config.toml").write_text(
        f'[llm]\nprovider = "openai"\nmodel = "m"\nextra_headers = {{ "{header}" = "x" }}\n'
    )
    with pytest.raises(ConfigError, match="extra_headers may not set"):
        Config.load(tmp_path, env={})


def test_extra_headers_are_sent(fake_llm: FakeLlm, tmp_path: Path) -> None:
    env = llm_env(
        "openai-compat",
        fake_llm.openai_url,
        AI_MEMORY_LLM__EXTRA_HEADERS='{"X-Team": "core"}',
        AI_MEMORY_LLM__USER_AGENT="memo/9",
    )
    fake_llm.push(answer({"title": "t"}))
    run(ask(chat_from(tmp_path, env)))
    headers = fake_llm.requests[0].headers
    assert headers["x-team"] == "core" and headers["user-agent"] == "memo/9"


@pytest.mark.parametrize("provider", ["openai", "anthropic", "gemini"])
def test_missing_key_fails_at_build_naming_the_variable(tmp_path: Path, provider: str) -> None:
    env = {"AI_MEMORY_LLM__PROVIDER": provider, "AI_MEMORY_LLM__MODEL": "m"}
    with pytest.raises(ConfigError, match="_API_KEY is not set"):
        build_chat(Config.load(tmp_path, env=env), env)


def test_missing_key_of_a_fallback_fails_too(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fallbacks = [{"provider": "anthropic", "model": "c", "api_key_env": "TEAM_CLAUDE_KEY"}]
    env = llm_env(
        "openai-compat", fake_llm.openai_url, AI_MEMORY_LLM_FALLBACKS=json.dumps(fallbacks)
    )
    with pytest.raises(ConfigError, match="TEAM_CLAUDE_KEY is not set"):
        build_chat(Config.load(tmp_path, env=env), env)


def test_task_section_with_another_provider_needs_a_model(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        '[llm]\nprovider = "openai"\nmodel = "m"\n[llm.rerank]\nprovider = "gemini"\n'
    )
    with pytest.raises(ConfigError, match=r"\[llm.rerank\] sets provider gemini"):
        build_chat(Config.load(tmp_path, env={}), {"OPENAI_API_KEY": "k"})


def test_server_refuses_to_start_without_its_key(data_dir: Path) -> None:
    settings = {"llm__provider": "openai", "llm__model": "m", "llm__api_key_env": "ABSENT_KEY"}
    with (
        pytest.raises(ConfigError, match="ABSENT_KEY is not set"),
        app_client(data_dir, **settings),
    ):
        pass


def test_key_never_in_logs_errors_or_status(
    fake_llm: FakeLlm,
    data_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("LLM_TEST_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    fake_llm.push(error(401, f"bad key {SECRET}"), answer({"title": "ok"}))
    settings = {
        "llm__provider": "openai",
        "llm__model": "m",
        "llm__base_url": fake_llm.openai_url,
        "llm__api_key_env": "LLM_TEST_KEY",
    }
    with app_client(data_dir, **settings) as client:
        runtime = client.app.state.runtime  # type: ignore[attr-defined]
        with pytest.raises(LlmUnavailable) as refused:
            client.portal.call(runtime.llm.structured, "test", Prompt("s", "u"), Note)  # type: ignore[union-attr]
        client.portal.call(runtime.llm.structured, "test", Prompt("s", "u"), Note)  # type: ignore[union-attr]
        status = client.get("/admin/status")
    assert fake_llm.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    assert status.status_code == 200
    (candidate,) = status.json()["llm"]["candidates"]
    assert candidate["provider"] == "openai" and candidate["last_error"] == "http_401"
    assert candidate["circuit"] == "closed" and candidate["last_success_at"]
    for text in (status.text, caplog.text, str(refused.value.to_dict())):
        assert SECRET not in text


def test_llm_test_command(fake_llm: FakeLlm, data_dir: Path) -> None:
    fallbacks = [{"provider": "anthropic", "model": "c", "base_url": fake_llm.openai_url}]
    env = clean_env(
        **llm_env("openai-compat", fake_llm.openai_url, model="local"),
        AI_MEMORY_LLM_FALLBACKS=json.dumps(fallbacks),
        ANTHROPIC_API_KEY=SECRET,
    )
    fake_llm.push(answer({"ok": True, "word": "pong"}), answer({"ok": True, "word": "pong"}))
    passed = run_cli("llm-test", "--json", data_dir=data_dir, env=env)
    assert passed.returncode == 0, passed.stderr
    report = json.loads(passed.stdout)
    assert [(c["provider"], c["ok"]) for c in report["candidates"]] == [
        ("openai-compat", True),
        ("anthropic", True),
    ]
    fake_llm.push(answer({"ok": True, "word": "pong"}), error(401, SECRET))
    failed = run_cli("llm-test", data_dir=data_dir, env=env)
    assert failed.returncode == 1
    assert b"HTTP 401" in failed.stdout and SECRET.encode() not in failed.stdout + failed.stderr


def test_llm_test_without_provider_fails(data_dir: Path) -> None:
    proc = run_cli("llm-test", data_dir=data_dir)
    assert proc.returncode == 1 and b"no LLM provider configured" in proc.stderr


def test_doctor_names_the_missing_key(data_dir: Path, tmp_path: Path) -> None:
    env = {"AI_MEMORY_LLM__PROVIDER": "gemini", "AI_MEMORY_LLM__MODEL": "g"}
    ctx = DoctorContext.load(data_dir, tmp_path, env)
    (finding,) = check_llm(ctx)
    assert finding.severity is Severity.ERROR and "GEMINI_API_KEY" in finding.message
    ctx = DoctorContext.load(data_dir, tmp_path, {**env, "GEMINI_API_KEY": "k"})
    assert [f.severity for f in check_llm(ctx)] == [Severity.OK]


def test_a_section_error_names_the_variables_it_came_from(tmp_path: Path) -> None:
    """Configured through the environment only: the error names the variables, never a
    config.toml that does not exist."""
    env = {"AI_MEMORY_LLM__PROVIDER": "openai-compat", "AI_MEMORY_LLM__MODEL": "m"}
    with pytest.raises(ConfigError, match="needs base_url") as raised:
        Config.load(tmp_path, env=env)
    message = raised.value.message
    assert "AI_MEMORY_LLM__PROVIDER" in message and "config.toml" not in message
    fallbacks = {**env, "AI_MEMORY_LLM__BASE_URL": "http://127.0.0.1:9/v1"}
    fallbacks["AI_MEMORY_LLM_FALLBACKS"] = '[{"provider": "openai"}]'
    with pytest.raises(ConfigError, match="model") as raised:
        Config.load(tmp_path, env=fallbacks)
    assert "environment variable AI_MEMORY_LLM_FALLBACKS" in raised.value.message
