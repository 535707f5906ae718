"""A provider cannot make the server hold a huge answer or wait on one forever:
chat answers and embeddings are refused past a size cap, and an embeddings
answer that trickles in is cut off at ``[embeddings] timeout_s`` for the whole call."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ai_memory.config import Config
from ai_memory.core.errors import LlmBadAnswer, Unavailable
from ai_memory.llm.capped import MAX_ANSWER_BYTES
from ai_memory.llm.remote_embeddings import RemoteEmbedder
from tests.fake_llm import FakeLlm, answer, fake_llm
from tests.llm_support import ask, chat_from, llm_env, run

__all__ = ["fake_llm"]


def test_a_chat_answer_past_the_size_cap_is_a_bad_answer(fake_llm: FakeLlm, tmp_path: Path) -> None:
    padded = '{"title": "x"' + " " * MAX_ANSWER_BYTES + "}"  # valid JSON, just huge
    fake_llm.push(answer(padded), answer({"title": "small"}))
    chat = chat_from(tmp_path, llm_env("openai-compat", fake_llm.openai_url))
    with pytest.raises(LlmBadAnswer, match="larger than"):
        run(ask(chat))
    chat = chat_from(tmp_path, llm_env("openai-compat", fake_llm.openai_url))
    assert run(ask(chat)).title == "small"  # an answer under the cap still lands


@pytest.fixture
def drip() -> Iterator[tuple[str, dict[str, object]]]:
    """An embeddings endpoint that answers valid JSON one byte every 50 ms for ~4 s, or
    (``settings["huge"]``) one answer larger than the cap, at full speed."""
    settings: dict[str, object] = {"huge": False}
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                return
            with conn:
                conn.recv(65536)
                body = json.dumps({"data": [{"index": 0, "embedding": [1.0] * 8}]}).encode()
                if settings["huge"]:
                    body = body[:-1] + b" " * MAX_ANSWER_BYTES + b"}"
                head = f"HTTP/1.1 200 OK\r\nContent-Length: {len(body)}\r\n\r\n".encode()
                try:
                    conn.sendall(head)
                    if settings["huge"]:
                        conn.sendall(body)
                        continue
                    step = max(1, len(body) // 80)
                    for i in range(0, len(body), step):
                        if stop.wait(0.05):
                            return
                        conn.sendall(body[i : i + step])
                except OSError:
                    continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/v1", settings
    stop.set()
    server.close()
    thread.join(timeout=5)


def remote(url: str, tmp_path: Path) -> RemoteEmbedder:
    env = {
        "AI_MEMORY_EMBEDDINGS__PROVIDER": "openai-compat",
        "AI_MEMORY_EMBEDDINGS__BASE_URL": url,
        "AI_MEMORY_EMBEDDINGS__MODEL": "e",
        "AI_MEMORY_EMBEDDINGS__DIM": "8",
        "AI_MEMORY_EMBEDDINGS__TIMEOUT_S": "1",
    }
    return RemoteEmbedder.from_settings(Config.load(tmp_path, env=env).embeddings, env)


def test_an_embeddings_answer_that_trickles_in_is_cut_off_at_timeout_s(
    drip: tuple[str, dict[str, object]], tmp_path: Path
) -> None:
    url, _ = drip
    with pytest.raises(Unavailable, match="within 1 s"):  # it would all arrive after ~4 s
        remote(url, tmp_path).embed_query("a")


def test_an_embeddings_answer_past_the_size_cap_is_unavailable(
    drip: tuple[str, dict[str, object]], tmp_path: Path
) -> None:
    url, settings = drip
    settings["huge"] = True
    with pytest.raises(Unavailable, match="larger than"):
        remote(url, tmp_path).embed_query("a")
