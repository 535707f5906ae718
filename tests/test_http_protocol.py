"""A real server's HTTP/1.1 framing: pipelining, keep-alive, bad framing, head size, deadlines."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest

from ai_memory.config import ServerSettings
from tests.conftest import ServerProcess, clean_env, shared_server
from tests.test_server_limits import CLIENT_WAIT_S, closed_by_server, connect

PAGES = "/api/v1/projects/default/framing/pages"
LIMITS = {"AI_MEMORY_SERVER__HEADER_TIMEOUT_S": "1", "AI_MEMORY_SERVER__BODY_TIMEOUT_S": "2"}
MAX_HEAD = ServerSettings().max_header_bytes
JSON = "application/json"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    with shared_server(tmp_path_factory, "framing", clean_env(**LIMITS)) as proc:
        yield proc


def head(srv: ServerProcess, method: str, target: str, **headers: str) -> bytes:
    lines = [f"{method} {target} HTTP/1.1", "Host: 127.0.0.1", f"Authorization: Bearer {srv.token}"]
    lines += [f"{name.replace('_', '-')}: {value}" for name, value in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def put(srv: ServerProcess, name: str, body: str) -> bytes:
    payload = json.dumps({"body": body}).encode()
    length = str(len(payload))
    return head(srv, "PUT", f"{PAGES}/{name}", Content_Type=JSON, Content_Length=length) + payload


def read_answers(sock: socket.socket, count: int) -> list[tuple[int, dict[str, str], bytes]]:
    """``count`` whole answers (status, headers, body) read off one socket, in order."""
    reader = sock.makefile("rb")
    answers = []
    for _ in range(count):
        status = int(reader.readline().split()[1])
        headers: dict[str, str] = {}
        while (line := reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode().partition(":")
            headers[name.strip().lower()] = value.strip()
        answers.append((status, headers, reader.read(int(headers["content-length"]))))
    return answers


def test_pipelined_requests_are_answered_in_order(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(
            put(srv, "order.md", "first")
            + put(srv, "order.md", "second")
            + head(srv, "GET", f"{PAGES}/order.md")
            + head(srv, "GET", "/healthz")
        )
        answers = read_answers(sock, 4)
    assert [status for status, _, _ in answers] == [200, 200, 200, 200]
    assert "second" in json.loads(answers[2][2])["body"]
    assert json.loads(answers[3][2])["status"] == "ok"


def test_one_keep_alive_connection_carries_many_requests(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        for i in range(5):
            sock.sendall(put(srv, f"kept-{i}.md", f"page {i}"))
            ((status, headers, _),) = read_answers(sock, 1)
            assert status == 200 and headers.get("connection") != "close"
        sock.sendall(head(srv, "GET", f"{PAGES}/kept-4.md"))
        ((status, _, body),) = read_answers(sock, 1)
    assert status == 200 and "page 4" in json.loads(body)["body"]


def test_a_large_body_in_the_same_read_as_its_head_is_accepted(srv: ServerProcess) -> None:
    text = "word " * (4 * MAX_HEAD // 5)  # a body four times the head cap, sent at once
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/healthz") + put(srv, "big.md", text))
        answers = read_answers(sock, 2)
    assert [status for status, _, _ in answers] == [200, 200]


@pytest.mark.parametrize(
    "request_bytes",
    [
        b"GARBAGE\r\n\r\n",
        b"GET /healthz HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nBad Header: x\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    ],
)
def test_a_malformed_request_gets_400_and_the_socket_closes(
    srv: ServerProcess, request_bytes: bytes
) -> None:
    with connect(srv) as sock:
        sock.sendall(request_bytes)
        closed, received = closed_by_server(sock)
    assert closed and received.startswith(b"HTTP/1.1 400 "), received[:100]


def test_bad_chunked_encoding_gets_400_and_nothing_is_written(srv: ServerProcess) -> None:
    payload = json.dumps({"body": "never stored"}).encode()
    chunked = {"Content_Type": JSON, "Transfer_Encoding": "chunked"}
    request = head(srv, "PUT", f"{PAGES}/chunked.md", **chunked)
    with connect(srv) as sock:
        sock.sendall(request + f"{len(payload):x}\r\n".encode() + payload + b"\r\nzz\r\n")
        closed, received = closed_by_server(sock)
    assert closed and received.startswith(b"HTTP/1.1 400 "), received[:100]
    with srv.client() as client:
        assert client.get(f"{PAGES}/chunked.md").status_code == 404


def test_good_chunked_encoding_is_stored(srv: ServerProcess) -> None:
    payload = json.dumps({"body": "sent in chunks"}).encode()
    request = head(srv, "PUT", f"{PAGES}/chunks.md", Content_Type=JSON, Transfer_Encoding="chunked")
    halves = (payload[:10], payload[10:])
    chunks = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in halves)
    with connect(srv) as sock:
        sock.sendall(request + chunks + b"0\r\n\r\n")
        ((status, _, _),) = read_answers(sock, 1)
    assert status == 200
    with srv.client() as client:
        assert "sent in chunks" in client.get(f"{PAGES}/chunks.md").json()["body"]


def test_a_head_over_the_cap_across_reads_gets_400_with_the_reason(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        for _ in range(MAX_HEAD // 1000 + 2):
            sock.sendall(b"X-Filler: " + b"f" * 988 + b"\r\n")
        closed, received = closed_by_server(sock)
    assert closed and received.startswith(b"HTTP/1.1 400 "), received[:100]
    assert f"exceed {MAX_HEAD} bytes".encode() in received


def test_a_head_over_the_cap_on_a_kept_alive_connection_is_refused(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/healthz"))
        assert read_answers(sock, 1)[0][0] == 200
        sock.sendall(b"GET /healthz HTTP/1.1\r\nX-Big: " + b"b" * (MAX_HEAD + 10))
        closed, received = closed_by_server(sock)
    assert closed and received.startswith(b"HTTP/1.1 400 "), received[:100]


def test_a_head_just_under_the_cap_is_answered(srv: ServerProcess) -> None:
    filler = "f" * (MAX_HEAD - 1024)
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/healthz", X_Filler=filler))
        ((status, _, _),) = read_answers(sock, 1)
    assert status == 200


def test_a_slow_head_on_a_kept_alive_connection_gets_408(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/healthz"))
        assert read_answers(sock, 1)[0][0] == 200
        sock.sendall(b"GET /healthz HTTP/1.1\r\n")
        closed, received = closed_by_server(sock, dribble=b"X-Slow: 1\r\n")
    assert closed and received.startswith(b"HTTP/1.1 408 "), received[:100]


def test_a_body_dribbled_slower_than_its_deadline_is_cut(srv: ServerProcess) -> None:
    request = head(srv, "PUT", f"{PAGES}/dribbled.md", Content_Type=JSON, Content_Length="1000000")
    with connect(srv) as sock:
        sock.sendall(request + b'{"body": "')
        closed, _ = closed_by_server(sock, dribble=b"d")
    assert closed
    with srv.client() as client:
        assert client.get(f"{PAGES}/dribbled.md").status_code == 404


def test_an_idle_kept_alive_connection_is_closed_without_an_answer(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(head(srv, "GET", "/healthz"))
        assert read_answers(sock, 1)[0][0] == 200
        sock.settimeout(CLIENT_WAIT_S)
        assert sock.recv(4096) == b""  # the keep-alive timeout, silently


def test_an_answer_leaves_in_one_write_and_a_head_answer_still_comes(srv: ServerProcess) -> None:
    """The status line and headers wait for the body, so the first read holds it all."""
    with connect(srv) as sock:
        for request in (put(srv, "one-write.md", "whole"), head(srv, "GET", "/healthz")):
            sock.sendall(request)
            first = sock.recv(65536)
            top, _, body = first.partition(b"\r\n\r\n")
            length = int(top.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            assert length > 0 and len(body) == length, first
        sock.sendall(head(srv, "HEAD", f"{PAGES}/one-write.md"))  # no body write follows
        top = sock.recv(65536)
        assert top.startswith(b"HTTP/1.1 ") and top.endswith(b"\r\n\r\n"), top
