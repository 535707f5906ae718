"""A real server at its connection cap: idle sockets make room, busy ones get 503s."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from tests.conftest import ServerProcess, clean_env
from tests.test_server_limits import CLIENT_WAIT_S, PAGES, closed_by_server, connect

# Header deadline far away: only the connection cap can close an idle socket here.
CROWDED = {
    "AI_MEMORY_SERVER__MAX_CONNECTIONS": "4",
    "AI_MEMORY_SERVER__HEADER_TIMEOUT_S": "60",
    "AI_MEMORY_SERVER__BODY_TIMEOUT_S": "60",
}
HEALTHZ = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"


@pytest.fixture(scope="module")
def crowded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("crowded") / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root, env=clean_env(**CROWDED)).start()
    try:
        yield proc
    finally:
        proc.stop()


def still_open(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        sock.setblocking(True)


def test_idle_sockets_make_room_for_real_clients(crowded: ServerProcess) -> None:
    idle = [connect(crowded) for _ in range(12)]  # three times max_connections
    try:
        answered = None
        deadline = time.monotonic() + CLIENT_WAIT_S
        while time.monotonic() < deadline:
            with connect(crowded) as probe:
                probe.sendall(HEALTHZ)
                assert closed_by_server(probe)[1].startswith(b"HTTP/1.1 200 ")  # always
            with crowded.client() as client:
                answered = client.get("/api/v1/projects")
            if answered.status_code == 200:
                break
            assert answered.status_code == 503 and answered.json()["error"] == "busy"
            time.sleep(0.2)  # idle sockets become closable after a moment
        assert answered is not None and answered.status_code == 200
        assert not all(still_open(sock) for sock in idle)  # idle ones closed to make room
    finally:
        for sock in idle:
            sock.close()


def test_a_full_server_answers_healthz_and_refuses_the_rest(crowded: ServerProcess) -> None:
    token = crowded.token
    head = (
        f"PUT {PAGES}/held.md HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nContent-Length: 100\r\n\r\n"
    ).encode()
    api = (
        f"GET /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    ).encode()
    holders = [connect(crowded) for _ in range(4)]
    try:
        for sock in holders:
            sock.sendall(head)  # every connection mid-request: none can be closed
        answer = b""
        deadline = time.monotonic() + CLIENT_WAIT_S
        while not answer.startswith(b"HTTP/1.1 503 ") and time.monotonic() < deadline:
            with connect(crowded) as probe:
                probe.sendall(api)
                _, answer = closed_by_server(probe)
            time.sleep(0.05)
        assert answer.startswith(b"HTTP/1.1 503 "), answer[:100]
        assert b'"error": "busy"' in answer and b"connection limit" in answer
        assert all(still_open(sock) for sock in holders)
        with connect(crowded) as probe:
            probe.sendall(HEALTHZ)
            assert closed_by_server(probe)[1].startswith(b"HTTP/1.1 200 ")
        assert httpx.get(f"{crowded.url}/healthz").status_code == 200
    finally:
        for sock in holders:
            sock.close()
