"""Builds a session's entries the way live hooks report them, one turn at a time.

A turn's final assistant message is reported once, as the turn's ``stop``: the
readers give every assistant text they meet, and only the last one before the
next prompt (or the end of the session) is kept.
"""

from __future__ import annotations

from typing import Any

from ai_memory.importers.model import Entry, Transcript


class TurnLog:
    def __init__(self, transcript: Transcript) -> None:
        self.transcript = transcript
        self._answer: Entry | None = None

    def start(self, at: str | None, source: str = "imported") -> None:
        self._add(Entry("session-start", "start", at, {"source": source}))

    def prompt(self, ident: str, at: str | None, text: str) -> None:
        if not text.strip():
            return
        self._flush()
        self._add(Entry("user-prompt", ident, at, {"prompt": text}))

    def tool(
        self,
        ident: str,
        at: str | None,
        name: str,
        tool_input: object,
        response: object,
        *,
        failed: bool = False,
    ) -> None:
        payload: dict[str, Any] = {"tool_name": name or "tool", "tool_input": tool_input}
        if response is not None:
            payload["tool_response"] = response
        if failed:
            payload["success"] = False
        self._add(Entry("post-tool-use", ident, at, payload))

    def answer(self, ident: str, at: str | None, text: str) -> None:
        if text.strip():
            self._answer = Entry("stop", ident, at, {"last_assistant_message": text})

    def finish(self) -> Transcript:
        self._flush()
        return self.transcript

    def _flush(self) -> None:
        if self._answer is not None:
            self._add(self._answer)
            self._answer = None

    def _add(self, entry: Entry) -> None:
        self.transcript.entries.append(entry)
