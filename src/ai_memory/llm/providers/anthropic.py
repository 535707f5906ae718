"""Anthropic's messages API; structured output through a forced tool call.

The answer schema is the input schema of a single tool the model must call, so
the answer arrives as the tool call's parsed ``input``. ``stop_reason`` of
``max_tokens`` means the call was cut off and is refused whole.
"""

from __future__ import annotations

import json
from typing import Any

from ai_memory.llm.chat import Prompt
from ai_memory.llm.providers.base import Provider

API_VERSION = "2023-06-01"
TOOL = "answer"


class Anthropic(Provider):
    default_base_url = "https://api.anthropic.com/v1"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-api-key": key, "anthropic-version": API_VERSION}

    async def answer_json(self, prompt: Prompt, schema: dict[str, Any]) -> str:
        body = {
            "model": self.model,
            "max_tokens": prompt.max_tokens,
            "system": prompt.system,
            "messages": [{"role": "user", "content": prompt.user}],
            "tools": [{"name": TOOL, "description": "Give the answer.", "input_schema": schema}],
            "tool_choice": {"type": "tool", "name": TOOL},
        }
        payload = await self.post(f"{self.base_url}/messages", body)
        if payload.get("stop_reason") == "max_tokens":
            raise self.bad("the answer was truncated (stop_reason=max_tokens)")
        blocks = payload.get("content")
        for block in blocks if isinstance(blocks, list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                answer = block.get("input")
                if not isinstance(answer, dict) or not answer:
                    raise self.bad("the answer is empty")
                return json.dumps(answer)
        raise self.bad("the answer has no tool call")
