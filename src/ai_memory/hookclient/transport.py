"""A tiny HTTP/1.1 client on a raw socket, with one deadline for every request it makes.

``http.client`` pulls in ``email`` and ``ssl`` and costs the hook client tens of
milliseconds on every run; talking to a local server needs far less. HTTPS
servers are reached through ``http.client``, imported only then.
"""

from __future__ import annotations

import json
import socket
import time
from typing import Any
from urllib.parse import quote, urlsplit


class Unreachable(Exception):
    """The server could not be reached, or did not answer before the deadline."""


class Transport:
    def __init__(self, base_url: str, token: str | None, deadline: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Unreachable(f"server URL {base_url!r} is not http(s)://host:port")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port or (443 if self._https else 80)
        self._prefix = parts.path.rstrip("/")
        self._token = token
        self.deadline = deadline
        self._sock: socket.socket | None = None
        self._buffer = b""
        self.down = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def request(
        self, method: str, path: str, params: dict[str, str], body: Any = None
    ) -> tuple[int, Any]:
        """Return (status, decoded JSON or None); raise :class:`Unreachable` on any failure."""
        if self.down:
            raise Unreachable("server already found unreachable")
        if self.remaining() <= 0.005:
            raise Unreachable("out of time")
        target = f"{self._prefix}{path}"
        if params:
            target += "?" + "&".join(
                f"{quote(k)}={quote(str(v), safe='')}" for k, v in params.items()
            )
        data = b"" if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        try:
            if self._https:
                status, raw = self._https_request(method, target, data)
            else:
                status, raw = self._http_request(method, target, data)
        except (OSError, ValueError) as exc:
            self.close()
            self.down = True
            raise Unreachable(f"{type(exc).__name__}: {exc}") from None
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = None
        return status, payload

    def _headers(self, method: str, target: str, length: int) -> bytes:
        lines = [
            f"{method} {target} HTTP/1.1",
            f"Host: {self._host}:{self._port}",
            "Content-Type: application/json",
            f"Content-Length: {length}",
            "Connection: keep-alive",
        ]
        if self._token:
            lines.append(f"Authorization: Bearer {self._token}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _http_request(self, method: str, target: str, data: bytes) -> tuple[int, bytes]:
        sock = self._connect()
        sock.settimeout(max(self.remaining(), 0.001))
        sock.sendall(self._headers(method, target, len(data)) + data)
        head = self._read_until(sock, b"\r\n\r\n")
        status_line, _, header_text = head.partition(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        length, chunked, close = 0, False, False
        for line in header_text.split(b"\r\n"):
            name, _, value = line.partition(b":")
            key = name.strip().lower()
            if key == b"content-length":
                length = int(value.strip())
            elif key == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
            elif key == b"connection" and b"close" in value.lower():
                close = True
        raw = self._read_chunked(sock) if chunked else self._read_exactly(sock, length)
        if close:
            self.close()
        return status, raw

    def _connect(self) -> socket.socket:
        if self._sock is None:
            timeout = max(self.remaining(), 0.001)
            self._sock = socket.create_connection((self._host, self._port), timeout=timeout)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self._buffer = b""
        return self._sock

    def _fill(self, sock: socket.socket) -> None:
        if self.remaining() <= 0:
            raise TimeoutError("deadline passed")
        sock.settimeout(max(self.remaining(), 0.001))
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self._buffer += chunk

    def _read_until(self, sock: socket.socket, marker: bytes) -> bytes:
        while marker not in self._buffer:
            self._fill(sock)
        head, _, self._buffer = self._buffer.partition(marker)
        return head

    def _read_exactly(self, sock: socket.socket, size: int) -> bytes:
        while len(self._buffer) < size:
            self._fill(sock)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _read_chunked(self, sock: socket.socket) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self._read_until(sock, b"\r\n").split(b";")[0], 16)
            if size == 0:
                self._read_until(sock, b"\r\n")
                return b"".join(parts)
            parts.append(self._read_exactly(sock, size))
            self._read_exactly(sock, 2)

    def _https_request(self, method: str, target: str, data: bytes) -> tuple[int, bytes]:
        import http.client

        conn = http.client.HTTPSConnection(self._host, self._port, timeout=self.remaining())
        try:
            headers = {"Content-Type": "application/json"}
            if self._token:
                headers["Authorization"] = f"Bearer {self._token}"
            conn.request(method, target, body=data or None, headers=headers)
            response = conn.getresponse()
            return response.status, response.read()
        except http.client.HTTPException as exc:
            raise ConnectionError(str(exc)) from None
        finally:
            conn.close()

    def close(self) -> None:
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._buffer = b""
