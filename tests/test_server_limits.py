"""A real server's limits: slow and idle sockets, caps, Host/Origin rule, auth header, binds."""

from __future__ import annotations

import http.client
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
from ai_memory.web.webauth import COOKIE_NAME, cookie_for
from tests.conftest import AI_MEMORY, ServerProcess, clean_env, free_port, run_cli

LIMITS = {
    "AI_MEMORY_SERVER__HEADER_TIMEOUT_S": "1",
    "AI_MEMORY_SERVER__BODY_TIMEOUT_S": "2",
    "AI_MEMORY_SERVER__MAX_REQUESTS_IN_FLIGHT": "1",
    "AI_MEMORY_SERVER__MAX_REQUESTS_PER_CONNECTION": "3",
}
# Generous: the server closes after 1-2 s; the client waits far longer before failing.
CLIENT_WAIT_S = 20.0
PAGES = "/api/v1/projects/default/limits/pages"
HOOK = "/hook?workspace=default&project=limits&agent=claude-code&session_id=s-1"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    root = tmp_path_factory.mktemp("limits") / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root, env=clean_env(**LIMITS)).start()
    try:
        yield proc
    finally:
        proc.stop()


def connect(srv: ServerProcess) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", srv.port), timeout=CLIENT_WAIT_S)
    return sock


def closed_by_server(sock: socket.socket, dribble: bytes = b"") -> tuple[bool, bytes]:
    """Read (sending ``dribble`` between reads) until EOF; True when the server closed it."""
    received = b""
    deadline = time.monotonic() + CLIENT_WAIT_S
    sock.settimeout(0.2)
    while time.monotonic() < deadline:
        try:
            if dribble:
                sock.sendall(dribble)
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            return True, received
        if not chunk:
            return True, received
        received += chunk
    return False, received


def test_a_silent_socket_is_closed(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        closed, received = closed_by_server(sock)
    assert closed and received == b""


def test_a_slow_loris_socket_is_closed_with_408(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        closed, received = closed_by_server(sock, dribble=b"X-Slow: 1\r\n")
    assert closed
    assert received.startswith(b"HTTP/1.1 408 ")


def test_a_stalled_body_is_closed_and_nothing_is_written(srv: ServerProcess) -> None:
    head = (
        f"PUT {PAGES}/stalled.md HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {srv.token}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100\r\n\r\n"
    )
    with connect(srv) as sock:
        sock.sendall(head.encode() + b'{"body": "half')
        closed, _ = closed_by_server(sock)
    assert closed
    with srv.client() as client:
        assert client.get(f"{PAGES}/stalled.md").status_code == 404


def test_requests_past_the_in_flight_cap_get_503_but_healthz_answers(srv: ServerProcess) -> None:
    head = (
        f"PUT {PAGES}/held.md HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {srv.token}\r\nContent-Length: 100\r\n\r\n"
    )
    with connect(srv) as holder, srv.client() as client:
        holder.sendall(head.encode())  # in flight, waiting for its body
        statuses: set[int] = set()
        deadline = time.monotonic() + CLIENT_WAIT_S
        busy = None
        while 503 not in statuses and time.monotonic() < deadline:
            busy = client.get("/api/v1/projects")
            statuses.add(busy.status_code)
        assert busy is not None and busy.status_code == 503
        assert busy.json()["error"] == "busy" and busy.headers["retry-after"] == "1"
        assert client.get("/healthz").status_code == 200


def test_a_connection_carries_at_most_the_configured_requests(srv: ServerProcess) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=CLIENT_WAIT_S)
    answers = []
    for _ in range(3):
        conn.request("GET", "/healthz")
        response = conn.getresponse()
        response.read()
        answers.append(response.getheader("connection"))
    conn.close()
    assert answers == [None, None, "close"]


def test_pipelined_requests_past_the_cap_are_not_answered(srv: ServerProcess) -> None:
    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    with connect(srv) as sock:
        sock.sendall(request * 5)
        closed, received = closed_by_server(sock)
    answers = received.split(b"HTTP/1.1 ")[1:]
    assert closed and len(answers) == 3, received
    assert [b"connection: close" in answer for answer in answers] == [False, False, True]


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/healthz"),
        ("GET", "/api/v1/projects"),
        ("POST", HOOK),
        ("GET", "/web"),
        ("POST", "/mcp"),
    ],
)
def test_a_foreign_host_is_refused_on_every_route(
    srv: ServerProcess, method: str, path: str
) -> None:
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    extra = {"Accept": "application/json, text/event-stream"}
    with srv.client() as client:
        for host in ("evil.example", f"evil.example:{srv.port}", "127.0.0.1.evil.example"):
            refused = client.request(method, path, json=rpc, headers={**extra, "Host": host})
            assert refused.status_code == 421, (host, refused.text)
            assert "Host header" in refused.json()["message"]
        for host in (f"127.0.0.1:{srv.port}", f"localhost:{srv.port}", "localhost", "[::1]"):
            answered = client.request(method, path, json=rpc, headers={**extra, "Host": host})
            assert answered.status_code not in (400, 421), (host, answered.text)


def test_a_missing_or_doubled_host_is_refused(srv: ServerProcess) -> None:
    for request in (
        b"GET /healthz HTTP/1.0\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: evil.example\r\n\r\n",
    ):
        with connect(srv) as sock:
            sock.sendall(request)
            _, received = closed_by_server(sock)
        assert received.startswith(b"HTTP/1.1 400 "), received


def test_a_foreign_origin_is_refused_on_writes_and_cookie_pages(srv: ServerProcess) -> None:
    own = f"http://127.0.0.1:{srv.port}"
    handoff = {"project": "limits", "summary": "carry on"}
    cookie = {"Cookie": f"{COOKIE_NAME}={cookie_for(srv.token)}"}
    with srv.client() as client:
        for origin in ("http://evil.example", f"http://localhost:{srv.port + 1}", "null"):
            refused = client.post("/api/v1/handoffs", json=handoff, headers={"Origin": origin})
            assert refused.status_code == 403 and refused.json()["error"] == "forbidden_origin"
            login = client.post("/web/login", data={"token": srv.token}, headers={"Origin": origin})
            assert login.status_code == 403
            page = httpx.get(f"{srv.url}/web", headers={**cookie, "Origin": origin})
            assert page.status_code == 403
        accepted = client.post("/api/v1/handoffs", json=handoff, headers={"Origin": own})
        assert accepted.is_success, accepted.text
        assert httpx.get(f"{srv.url}/web", headers={**cookie, "Origin": own}).status_code == 200
        # A foreign page's GET of the API is harmless (no cookie opens it, no CORS reads it).
        assert client.get("/healthz", headers={"Origin": "http://evil.example"}).status_code == 200


def test_duplicate_authorization_headers_are_refused(srv: ServerProcess) -> None:
    good = f"Bearer {srv.token}"
    for second in (good, "Bearer wrong"):
        headers = [("Authorization", "Bearer wrong"), ("Authorization", second)]
        answer = httpx.get(f"{srv.url}/api/v1/projects", headers=headers)
        assert answer.status_code == 400
        assert "more than one Authorization header" in answer.json()["message"]


def test_a_non_loopback_bind_needs_the_flag(data_dir: Path) -> None:
    refused = run_cli("serve", "--bind", f"0.0.0.0:{free_port()}", data_dir=data_dir)
    assert refused.returncode == 1
    assert b"--allow-remote" in refused.stderr and b"0.0.0.0" in refused.stderr


def test_a_non_loopback_bind_with_the_flag_warns(data_dir: Path) -> None:
    port = free_port()
    log = data_dir / "remote.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                *AI_MEMORY,
                "serve",
                "--data-dir",
                str(data_dir),
                "--bind",
                f"0.0.0.0:{port}",
                "--allow-remote",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=clean_env(),
        )
    try:
        deadline = time.monotonic() + 30
        healthy = False
        while not healthy and time.monotonic() < deadline and process.poll() is None:
            try:
                healthy = httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).is_success
            except httpx.TransportError:
                time.sleep(0.05)
        assert healthy, log.read_text(errors="replace")
    finally:
        process.terminate()
        process.wait(timeout=30)
    text = log.read_text(errors="replace")
    assert "WARNING" in text and "reachable from other machines" in text


def test_oversized_headers_are_refused(srv: ServerProcess) -> None:
    with connect(srv) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 20_000)
        _, received = closed_by_server(sock)
    assert received.startswith(b"HTTP/1.1 400 "), received[:100]
