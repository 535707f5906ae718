"""The chain: fallback order on transient failures only, breakers, timeouts, the cap."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from ai_memory.core.errors import LlmBadAnswer, LlmUnavailable
from ai_memory.llm.breaker import Breaker
from ai_memory.llm.chain import LlmChat
from ai_memory.llm.chat import Prompt
from tests.fake_llm import FakeLlm, answer, error, fake_llm, slow, truncated
from tests.llm_support import Note, ask, chat_from, llm_env, run

__all__ = ["fake_llm"]


def two_models(fake: FakeLlm, **extra: str) -> dict[str, str]:
    """Primary model "a" with fallback model "b", both on the fake service."""
    fallbacks = [{"provider": "openai-compat", "model": "b", "base_url": fake.openai_url}]
    return llm_env(
        "openai-compat",
        fake.openai_url,
        model="a",
        AI_MEMORY_LLM_FALLBACKS=json.dumps(fallbacks),
        **extra,
    )


@pytest.mark.parametrize("failure", [error(429), error(500), error(503), error(529)])
def test_transient_failure_falls_back_in_order(
    fake_llm: FakeLlm, tmp_path: Path, failure: object
) -> None:
    fake_llm.push(failure, answer({"title": "from b"}))  # type: ignore[arg-type]
    note = run(ask(chat_from(tmp_path, two_models(fake_llm))))
    assert note.title == "from b"
    assert fake_llm.models() == ["a", "b"]


def test_connection_error_falls_back(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fallbacks = [{"provider": "openai-compat", "model": "b", "base_url": fake_llm.openai_url}]
    env = llm_env(
        "openai-compat",
        "http://127.0.0.1:9/v1",
        model="a",
        AI_MEMORY_LLM_FALLBACKS=json.dumps(fallbacks),
    )
    fake_llm.push(answer({"title": "from b"}))
    assert run(ask(chat_from(tmp_path, env))).title == "from b"


def test_timeout_falls_back(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(slow(2.0, {"title": "too late"}), answer({"title": "from b"}))
    chat = chat_from(tmp_path, two_models(fake_llm, AI_MEMORY_LLM__TIMEOUT_S="0.2"))
    assert run(ask(chat)).title == "from b"
    assert chat.health()[0]["last_error"] == "timeout"


@pytest.mark.parametrize("status", [400, 401, 403, 404, 422])
def test_refusal_is_not_retried_elsewhere(fake_llm: FakeLlm, tmp_path: Path, status: int) -> None:
    fake_llm.push(error(status), answer({"title": "never asked"}))
    with pytest.raises(LlmUnavailable, match=f"HTTP {status}"):
        run(ask(chat_from(tmp_path, two_models(fake_llm))))
    assert fake_llm.models() == ["a"]


def test_bad_answer_is_not_retried_elsewhere(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(truncated(), answer({"title": "never asked"}))
    with pytest.raises(LlmBadAnswer):
        run(ask(chat_from(tmp_path, two_models(fake_llm))))
    assert fake_llm.models() == ["a"]


def test_every_candidate_failing_is_unavailable(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(error(503), error(502))
    with pytest.raises(LlmUnavailable) as raised:
        run(ask(chat_from(tmp_path, two_models(fake_llm))))
    assert "openai-compat a: HTTP 503" in raised.value.message
    assert "openai-compat b: HTTP 502" in raised.value.message


def test_short_retry_after_is_waited_out_once(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(error(429, retry_after=0), answer({"title": "from a"}))
    assert run(ask(chat_from(tmp_path, two_models(fake_llm)))).title == "from a"
    assert fake_llm.models() == ["a", "a"]


def test_long_retry_after_moves_on(fake_llm: FakeLlm, tmp_path: Path) -> None:
    fake_llm.push(error(429, retry_after=120), answer({"title": "from b"}))
    assert run(ask(chat_from(tmp_path, two_models(fake_llm)))).title == "from b"
    assert fake_llm.models() == ["a", "b"]


def test_open_circuit_skips_its_candidate(fake_llm: FakeLlm, tmp_path: Path) -> None:
    env = two_models(
        fake_llm, AI_MEMORY_LLM__BREAKER_FAILURES="2", AI_MEMORY_LLM__BREAKER_OPEN_S="600"
    )
    chat = chat_from(tmp_path, env)
    fake_llm.push(error(503), answer({"title": "1"}), error(503), answer({"title": "2"}))
    fake_llm.push(answer({"title": "3"}))

    async def three_calls() -> list[str]:
        titles = []
        for _ in range(3):
            note = await chat.structured("test", Prompt("s", "u"), Note)
            titles.append(note.title)
        await chat.aclose()
        return titles

    assert run(three_calls()) == ["1", "2", "3"]
    assert fake_llm.models() == ["a", "b", "a", "b", "b"]
    primary, fallback = chat.health()
    assert primary["circuit"] == "open" and primary["last_error"] == "http_503"
    assert fallback["circuit"] == "closed" and fallback["last_success_at"]


def test_breaker_half_open_probe() -> None:
    now = [0.0]
    breaker = Breaker(failures=2, open_s=10, clock=lambda: now[0])
    breaker.failed()
    assert breaker.state == "closed" and breaker.allow()
    breaker.failed()
    assert breaker.state == "open" and not breaker.allow()
    now[0] = 10.0
    assert breaker.state == "half-open"
    assert breaker.allow()  # the one probe
    assert not breaker.allow()  # nobody else while it runs
    breaker.failed()  # the probe failed: open again for the full time
    assert breaker.state == "open"
    now[0] = 20.0
    assert breaker.allow()
    breaker.succeeded()
    assert breaker.state == "closed" and breaker.allow()


def test_concurrency_cap(fake_llm: FakeLlm, tmp_path: Path) -> None:
    chat = chat_from(
        tmp_path, llm_env("openai-compat", fake_llm.openai_url, AI_MEMORY_LLM__MAX_CONCURRENCY="1")
    )
    fake_llm.push(*[slow(0.1, {"title": str(i)}) for i in range(3)])

    async def together() -> list[str]:
        calls = [chat.structured("test", Prompt("s", "u"), Note) for _ in range(3)]
        notes = await asyncio.gather(*calls)
        await chat.aclose()
        return sorted(n.title for n in notes)

    assert run(together()) == ["0", "1", "2"]
    assert fake_llm.max_in_flight == 1


def test_task_chain_overrides_and_inherits(fake_llm: FakeLlm, tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text(
        f"""
[llm]
provider = "openai-compat"
model = "main"
base_url = "{fake_llm.openai_url}"

[llm.review]
model = "reviewer"

[[llm.review.fallbacks]]
provider = "openai-compat"
model = "reviewer-backup"
base_url = "{fake_llm.openai_url}"
"""
    )
    chat: LlmChat = chat_from(tmp_path, {})
    fake_llm.push(error(503), answer({"title": "r"}), answer({"title": "d"}))

    async def calls() -> None:
        await chat.structured("review", Prompt("s", "u"), Note)
        await chat.structured("answer", Prompt("s", "u"), Note)
        await chat.aclose()

    run(calls())
    assert fake_llm.models() == ["reviewer", "reviewer-backup", "main"]
    assert {h["model"]: h["tasks"] for h in chat.health()} == {
        "main": ["default"],
        "reviewer": ["review"],
        "reviewer-backup": ["review"],
    }


def test_a_cancelled_probe_frees_the_half_open_circuit(fake_llm: FakeLlm, tmp_path: Path) -> None:
    env = llm_env(
        "openai-compat",
        fake_llm.openai_url,
        AI_MEMORY_LLM__BREAKER_FAILURES="1",
        AI_MEMORY_LLM__BREAKER_OPEN_S="0",
    )
    chat = chat_from(tmp_path, env)
    fake_llm.push(error(503), slow(2.0, {"title": "never waited for"}), answer({"title": "back"}))

    async def calls() -> str:
        with pytest.raises(LlmUnavailable):
            await chat.structured("test", Prompt("s", "u"), Note)  # opens the circuit
        with pytest.raises(TimeoutError):  # the caller gives up on the probe
            await asyncio.wait_for(chat.structured("test", Prompt("s", "u"), Note), 0.2)
        note = await chat.structured("test", Prompt("s", "u"), Note)
        await chat.aclose()
        return note.title

    assert run(calls()) == "back"
