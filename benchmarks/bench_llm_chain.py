"""What the LLM chain adds to a provider call: validation, breaker, semaphore, fallback.

Against the fake OpenAI-compatible service on loopback, timed alternately so load on
the machine falls on both sides: a raw ``httpx`` POST of the same request body, and
``chat.structured`` through the chain (schema, call, pydantic validation). Then the
cost of a fallback when the primary answers 503, and when its circuit is open (the
primary is skipped without a request). Prints p50 and p95 in ms and the ratios.

    python benchmarks/bench_llm_chain.py [--calls 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
from pydantic import BaseModel
from tests.fake_llm import FakeLlm, answer, error

from ai_memory.config import Config
from ai_memory.llm.build import build_chat
from ai_memory.llm.chain import LlmChat
from ai_memory.llm.chat import Prompt
from ai_memory.llm.schema import answer_schema
from benchmarks.common import percentile

PROMPT = Prompt("You answer in JSON.", "Name one page title about SQLite WAL mode.", 256)


class Title(BaseModel):
    title: str
    tags: list[str] = []


def chat_for(fake: FakeLlm, root: Path, **extra: str) -> LlmChat:
    fallbacks = [{"provider": "openai-compat", "model": "b", "base_url": fake.openai_url}]
    env = {
        "AI_MEMORY_LLM__PROVIDER": "openai-compat",
        "AI_MEMORY_LLM__MODEL": "a",
        "AI_MEMORY_LLM__BASE_URL": fake.openai_url,
        "AI_MEMORY_LLM_FALLBACKS": json.dumps(fallbacks),
        **extra,
    }
    chat = build_chat(Config.load(root, env=env), env)
    assert chat is not None
    return chat


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    started = time.perf_counter()
    await call()
    return (time.perf_counter() - started) * 1000


def line(name: str, samples: list[float], base: list[float] | None = None) -> str:
    p50, p95 = statistics.median(samples), percentile(samples, 95)
    text = f"{name:<34} p50 {p50:7.3f} ms  p95 {p95:7.3f} ms"
    if base:
        text += f"  (x{p50 / statistics.median(base):.2f} p50)"
    return text


async def bench(fake: FakeLlm, root: Path, calls: int) -> None:
    chat = chat_for(fake, root)
    body = {
        "model": "a",
        "messages": [
            {"role": "system", "content": PROMPT.system},
            {"role": "user", "content": PROMPT.user},
        ],
        "max_tokens": PROMPT.max_tokens,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "answer", "schema": answer_schema(Title), "strict": False},
        },
    }
    reply = answer({"title": "WAL mode", "tags": ["sqlite"]})
    raw: list[float] = []
    chained: list[float] = []
    async with httpx.AsyncClient() as client:
        url = f"{fake.openai_url}/chat/completions"
        for i in range(calls):
            fake.push(reply, reply)
            sides = [
                (raw, lambda: client.post(url, json=body)),
                (chained, lambda: chat.structured("test", PROMPT, Title)),
            ]
            for samples, call in sides if i % 2 else reversed(sides):
                samples.append(await timed(call))
        fallback: list[float] = []
        for _ in range(calls // 3):
            fake.push(error(503), reply)
            fresh = chat_for(fake, root, AI_MEMORY_LLM__BREAKER_FAILURES="100")
            call = fresh.structured
            fallback.append(await timed(lambda call=call: call("test", PROMPT, Title)))
            await fresh.aclose()
        skipping = chat_for(fake, root, AI_MEMORY_LLM__BREAKER_FAILURES="1")
        fake.push(error(503), reply)
        await skipping.structured("test", PROMPT, Title)  # opens the primary's circuit
        skipped: list[float] = []
        for _ in range(calls // 3):
            fake.push(reply)
            skipped.append(await timed(lambda: skipping.structured("test", PROMPT, Title)))
        await skipping.aclose()
    await chat.aclose()
    print(line("raw httpx POST", raw))
    print(line("chat.structured (validated)", chained, raw))
    print(line("503 then fallback (fresh chain)", fallback, raw))
    print(line("primary circuit open, fallback", skipped, raw))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300)
    args = parser.parse_args()
    logging.getLogger("ai_memory.llm").setLevel(logging.ERROR)  # the fallbacks are on purpose
    with FakeLlm() as fake, tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        env = {
            "AI_MEMORY_LLM__PROVIDER": "openai",
            "AI_MEMORY_LLM__MODEL": "a",
            "AI_MEMORY_LLM_FALLBACKS": json.dumps([{"provider": "anthropic", "model": "b"}]),
            "OPENAI_API_KEY": "k",
            "ANTHROPIC_API_KEY": "k",
        }
        config = Config.load(root, env=env)
        started = time.perf_counter()
        chat = build_chat(config, env)
        built_ms = (time.perf_counter() - started) * 1000
        assert chat is not None
        asyncio.run(chat.aclose())
        print(f"build_chat (2 HTTPS candidates)     {built_ms:.1f} ms")
        asyncio.run(bench(fake, root, args.calls))


if __name__ == "__main__":
    main()
