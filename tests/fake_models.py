"""A small fake model server on loopback, so the real agent CLIs run offline.

It speaks just enough of each wire format for one scripted turn: on a fresh
prompt it asks for one shell command, once the command's result is back it
answers with text. It records the prompts it saw and the tool names offered,
so a test can tell which MCP tools reached the model. Nothing leaves the host.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FINAL = "Done: the greeting is printed.\n\nNext steps:\n- add a test for the greeting"
COMMAND = "echo hello-from-the-agent"


@dataclass
class Seen:
    """What the agents sent: every request body, the tool names offered, the prompts."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    tools: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, body: dict[str, Any], tools: list[str]) -> None:
        with self.lock:
            self.bodies.append(body)
            self.tools.update(tools)

    def text(self) -> str:
        with self.lock:
            return "\n".join(json.dumps(b) for b in self.bodies)


class FakeModels:
    """``with FakeModels() as fake:`` serves on ``fake.url`` until the block ends."""

    def __init__(self) -> None:
        self.seen = Seen()
        handler = type("Handler", (_Handler,), {"seen": self.seen})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> FakeModels:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Handler(BaseHTTPRequestHandler):
    seen: Seen
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        return

    def do_GET(self) -> None:
        if "/models" in self.path:
            self._json({"data": [{"id": "fake-model", "object": "model"}], "models": []})
        else:
            self._json({})

    def do_HEAD(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b"{}"
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        path = self.path.split("?")[0]
        if path.endswith("/messages/count_tokens"):
            self._json({"input_tokens": 10})
        elif path.endswith("/messages"):
            self._anthropic(body)
        elif ":countTokens" in path:
            self._json({"totalTokens": 10})
        elif ":streamGenerateContent" in path or ":generateContent" in path:
            self._gemini(body, stream=":stream" in path)
        elif path.endswith("/responses"):
            self._openai_responses(body)
        elif path.endswith("/chat/completions"):
            self._openai_chat(body)
        else:
            self._json({})

    # -- Anthropic Messages -----------------------------------------------------------

    def _anthropic(self, body: dict[str, Any]) -> None:
        tools = [t.get("name", "") for t in body.get("tools") or [] if isinstance(t, dict)]
        self.seen.add(body, tools)
        messages = body.get("messages") or []
        last = messages[-1] if messages else {}
        content = last.get("content")
        answered = isinstance(content, list) and any(
            isinstance(c, dict) and c.get("type") == "tool_result" for c in content
        )
        use_tool = "Bash" in tools and not answered
        blocks: list[dict[str, Any]] = (
            [
                {
                    "type": "tool_use",
                    "id": "toolu_fake1",
                    "name": "Bash",
                    "input": {"command": COMMAND},
                }
            ]
            if use_tool
            else [{"type": "text", "text": FINAL if tools else "Greeting"}]
        )
        stop = "tool_use" if use_tool else "end_turn"
        if not body.get("stream"):
            self._json(
                {
                    "id": "msg_fake",
                    "type": "message",
                    "role": "assistant",
                    "model": body.get("model", "fake"),
                    "content": blocks,
                    "stop_reason": stop,
                    "stop_sequence": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                }
            )
            return
        self._sse(_anthropic_events(body.get("model", "fake"), blocks, stop))

    # -- Gemini ---------------------------------------------------------------------------

    def _gemini(self, body: dict[str, Any], *, stream: bool) -> None:
        names = [
            d.get("name", "")
            for t in body.get("tools") or []
            for d in (t.get("functionDeclarations") or [])
            if isinstance(d, dict)
        ]
        self.seen.add(body, names)
        contents = body.get("contents") or []
        parts = (contents[-1].get("parts") or []) if contents else []
        answered = any(isinstance(p, dict) and "functionResponse" in p for p in parts)
        shell = "run_shell_command" in names
        if shell and not answered:
            part: dict[str, Any] = {
                "functionCall": {"name": "run_shell_command", "args": {"command": COMMAND}}
            }
        else:
            part = {"text": FINAL if names else '{"reasoning": "done", "next_speaker": "user"}'}
        reply = {
            "candidates": [
                {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}
            ],
            "usageMetadata": {
                "promptTokenCount": 10,
                "candidatesTokenCount": 5,
                "totalTokenCount": 15,
            },
            "modelVersion": "fake",
        }
        if stream:
            self._sse(iter([(None, reply)]))
        else:
            self._json(reply)

    # -- OpenAI Responses (Codex) -------------------------------------------------------

    def _openai_responses(self, body: dict[str, Any]) -> None:
        tools = [
            str(t.get("name") or (t.get("function") or {}).get("name") or "")
            for t in body.get("tools") or []
            if isinstance(t, dict)
        ]
        self.seen.add(body, tools)
        items = body.get("input") or []
        answered = any(
            isinstance(i, dict) and i.get("type") == "function_call_output" for i in items
        )
        shell = next((t for t in tools if t in ("shell", "exec_command", "local_shell")), None)
        self._sse(_responses_events(shell if not answered else None))

    # -- OpenAI Chat Completions (OpenCode's openai-compatible provider) -------------------

    def _openai_chat(self, body: dict[str, Any]) -> None:
        tools = [
            str((t.get("function") or {}).get("name") or "")
            for t in body.get("tools") or []
            if isinstance(t, dict)
        ]
        self.seen.add(body, tools)
        messages = body.get("messages") or []
        answered = bool(messages) and messages[-1].get("role") == "tool"
        shell = "bash" in tools and not answered
        text = FINAL if tools else "Greeting"
        chunks = [_chat_chunk({"role": "assistant", "content": "" if shell else text})]
        if shell:
            arguments = json.dumps({"command": COMMAND, "description": "Print a greeting"})
            call = {"index": 0, "id": "call_fake", "type": "function"}
            call["function"] = {"name": "bash", "arguments": arguments}
            chunks.append(_chat_chunk({"tool_calls": [call]}))
        chunks.append(_chat_chunk({}, "tool_calls" if shell else "stop"))
        lines = [f"data: {json.dumps(chunk)}\n\n" for chunk in chunks] + ["data: [DONE]\n\n"]
        self._stream("".join(lines).encode())

    # -- plumbing ---------------------------------------------------------------------------

    def _json(self, data: object) -> None:
        payload = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def _sse(self, events: Iterator[tuple[str | None, dict[str, Any]]]) -> None:
        chunks = []
        for name, data in events:
            head = f"event: {name}\n" if name else ""
            chunks.append(f"{head}data: {json.dumps(data)}\n\n")
        self._stream("".join(chunks).encode())

    def _stream(self, payload: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _chat_chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "fake-model",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    if finish:
        chunk["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    return chunk


def _anthropic_events(
    model: str, blocks: list[dict[str, Any]], stop: str
) -> Iterator[tuple[str | None, dict[str, Any]]]:
    usage = {"input_tokens": 10, "output_tokens": 1}
    message = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage,
    }
    yield "message_start", {"type": "message_start", "message": message}
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield (
            "content_block_start",
            {
                "type": "content_block_start",
                "index": index,
                "content_block": start,
            },
        )
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield (
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": None},
            "usage": {"output_tokens": 5},
        },
    )
    yield "message_stop", {"type": "message_stop"}


def _responses_events(shell: str | None) -> Iterator[tuple[str | None, dict[str, Any]]]:
    if shell is not None:
        arguments = json.dumps({"command": ["bash", "-lc", COMMAND], "cmd": COMMAND})
        item: dict[str, Any] = {
            "type": "function_call",
            "id": "fc_fake",
            "call_id": "call_fake",
            "name": shell,
            "arguments": arguments,
            "status": "completed",
        }
    else:
        item = {
            "type": "message",
            "id": "msg_fake",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": FINAL, "annotations": []}],
        }
    response = {"id": "resp_fake", "object": "response", "status": "in_progress", "output": []}
    yield "response.created", {"type": "response.created", "response": response}
    yield (
        "response.output_item.added",
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": item,
        },
    )
    if shell is None:
        yield (
            "response.output_text.delta",
            {
                "type": "response.output_text.delta",
                "item_id": "msg_fake",
                "output_index": 0,
                "content_index": 0,
                "delta": FINAL,
            },
        )
    yield (
        "response.output_item.done",
        {
            "type": "response.output_item.done",
            "output_index": 0,
            "item": item,
        },
    )
    done = {
        **response,
        "status": "completed",
        "output": [item],
        "usage": {
            "input_tokens": 10,
            "output_tokens": 5,
            "total_tokens": 15,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }
    yield "response.completed", {"type": "response.completed", "response": done}
