"""The OpenAI chat-completions wire format: OpenAI itself, Ollama, vLLM, LM Studio, llama.cpp.

Structured output goes through ``response_format`` of type ``json_schema``; a
``finish_reason`` of ``length`` means the JSON was cut off, so it is refused whole.
"""

from __future__ import annotations

from typing import Any

from ai_memory.llm.chat import Prompt
from ai_memory.llm.providers.base import Provider


class OpenAICompat(Provider):
    max_tokens_key = "max_tokens"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {key}"} if key else {}

    async def answer_json(self, prompt: Prompt, schema: dict[str, Any]) -> str:
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": prompt.system},
                {"role": "user", "content": prompt.user},
            ],
            self.max_tokens_key: prompt.max_tokens,
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": False},
            },
        }
        payload = await self.post(f"{self.base_url}/chat/completions", body)
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise self.bad("the response has no choices")
        choice = choices[0]
        if choice.get("finish_reason") == "length":
            raise self.bad("the answer was truncated (finish_reason=length)")
        message = choice.get("message") or {}
        if not isinstance(message, dict):
            raise self.bad("the response has no message")
        if message.get("refusal"):
            raise self.bad("the model refused to answer")
        content = message.get("content")
        if not isinstance(content, str) or not content.strip():
            raise self.bad("the answer is empty")
        return content


class OpenAI(OpenAICompat):
    default_base_url = "https://api.openai.com/v1"
    max_tokens_key = "max_completion_tokens"
