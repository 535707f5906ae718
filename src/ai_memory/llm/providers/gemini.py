"""Gemini's generateContent; structured output through responseSchema and a JSON MIME type.

A ``finishReason`` other than ``STOP`` (``MAX_TOKENS``, ``SAFETY``…) or a blocked
prompt means there is no whole answer, so it is refused.
"""

from __future__ import annotations

from typing import Any

from ai_memory.llm.chat import Prompt
from ai_memory.llm.providers.base import Provider
from ai_memory.llm.schema import gemini_schema


class Gemini(Provider):
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"

    def auth_headers(self, key: str) -> dict[str, str]:
        return {"x-goog-api-key": key}

    async def answer_json(self, prompt: Prompt, schema: dict[str, Any]) -> str:
        body = {
            "systemInstruction": {"parts": [{"text": prompt.system}]},
            "contents": [{"role": "user", "parts": [{"text": prompt.user}]}],
            "generationConfig": {
                "responseMimeType": "application/json",
                "responseSchema": gemini_schema(schema),
                "maxOutputTokens": prompt.max_tokens,
            },
        }
        payload = await self.post(f"{self.base_url}/models/{self.model}:generateContent", body)
        feedback = payload.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            raise self.bad(f"the prompt was blocked ({_code(feedback['blockReason'])})")
        candidates = payload.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            raise self.bad("the response has no candidates")
        first = candidates[0] if isinstance(candidates[0], dict) else {}
        reason = first.get("finishReason", "STOP")
        if reason == "MAX_TOKENS":
            raise self.bad("the answer was truncated (finishReason=MAX_TOKENS)")
        if reason != "STOP":
            raise self.bad(f"the answer stopped early (finishReason={_code(reason)})")
        content = first.get("content")
        parts = content.get("parts", []) if isinstance(content, dict) else []
        texts = [p.get("text", "") for p in parts if isinstance(p, dict)] if parts else []
        if not isinstance(parts, list) or not all(isinstance(t, str) for t in texts):
            raise self.bad("the answer's parts are not text")
        text = "".join(texts)
        if not text.strip():
            raise self.bad("the answer is empty")
        return text


def _code(value: object) -> str:
    """A reason code the service sent, as an error may show it: short, one line."""
    text = str(value)
    return text if len(text) <= 40 and text.isprintable() else repr(text[:40]) + "…"
