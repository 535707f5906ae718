"""A tiny HTTP/1.1 client on a raw socket, with one deadline for every request it makes.

``http.client`` pulls in ``email`` and ``ssl``, ``urllib.parse`` pulls in
``ipaddress``, and even ``socket`` builds its enums at import: together tens of
milliseconds on every run of the hook client and the MCP bridge. Talking to a
local server needs far less, so this module uses the ``_socket`` extension the
standard ``socket`` module wraps; HTTPS servers are reached through ``ssl``,
imported only then.
"""

from __future__ import annotations

import _socket
import time

from ai_memory.hookclient.fastjson import dumps, loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-~")


class Unreachable(Exception):
    """The server could not be reached, or did not answer before the deadline."""


def quote(text: str, safe: str = "") -> str:
    """Percent-encode ``text`` (UTF-8) as ``urllib.parse.quote`` does, without importing it."""
    keep = _UNRESERVED | frozenset(safe.encode("ascii"))
    raw = text.encode("utf-8", "surrogateescape")
    return "".join(chr(b) if b in keep else f"%{b:02X}" for b in raw)


def split_url(url: str) -> tuple[str, str, int, str]:
    """``(scheme, host, port, path)`` of an ``http(s)://host[:port][/path]`` URL.

    Raise ``ValueError`` for anything else.
    """
    scheme, sep, rest = url.strip().partition("://")
    scheme = scheme.lower()
    if not sep or scheme not in ("http", "https"):
        raise ValueError(f"server URL {url!r} is not http(s)://host:port")
    rest = rest.split("#", 1)[0].split("?", 1)[0]
    netloc, slash, path = rest.partition("/")
    netloc = netloc.rpartition("@")[2]
    if netloc.startswith("["):
        host, _, tail = netloc[1:].partition("]")
        port_text = tail[1:] if tail.startswith(":") else ""
    else:
        host, _, port_text = netloc.partition(":")
    if not host:
        raise ValueError(f"server URL {url!r} is not http(s)://host:port")
    port = int(port_text) if port_text else (443 if scheme == "https" else 80)
    if not 0 < port < 65536:
        raise ValueError(f"server URL {url!r} has no valid port")
    return scheme, host.lower(), port, (slash + path).rstrip("/")


class Connection:
    """One keep-alive connection; every wait on it ends at ``deadline`` (``time.monotonic``).

    After a failed exchange, ``connected`` says whether the socket had been connected
    and ``received`` whether any byte of the answer had arrived.
    """

    def __init__(self, host: str, port: int, https: bool, deadline: float) -> None:
        self.host = host
        self.port = port
        self.https = https
        self.deadline = deadline
        self.reused = False  # the open socket has carried an answered request
        self.connected = False
        self.received = False
        self._sock: Any = None
        self._buffer = b""

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def exchange(self, head: bytes, data: bytes) -> tuple[int, bytes]:
        """Send one request, return ``(status, body)``; raise ``OSError``/``ValueError``."""
        self.received = False
        try:
            sock = self._connect()
            self.connected = True
            sock.settimeout(max(self.remaining(), 0.001))
            sock.sendall(head + data)
            status, body, close = self._response(sock)
        except BaseException:
            self.close()
            raise
        self.reused = not close
        if close:
            self.close()
        return status, body

    def _response(self, sock: Any) -> tuple[int, bytes, bool]:
        head = self._read_until(sock, b"\r\n\r\n")
        status_line, _, header_text = head.partition(b"\r\n")
        status = int(status_line.split(b" ", 2)[1])
        length, chunked, close = -1, False, False
        for line in header_text.split(b"\r\n"):
            name, _, value = line.partition(b":")
            key = name.strip().lower()
            if key == b"content-length":
                length = int(value.strip())
            elif key == b"transfer-encoding" and b"chunked" in value.lower():
                chunked = True
            elif key == b"connection" and b"close" in value.lower():
                close = True
        if chunked:
            return status, self._read_chunked(sock), close
        if length < 0 and status not in (204, 304):
            return status, self._read_to_close(sock), True
        return status, self._read_exactly(sock, max(length, 0)), close

    def _connect(self) -> Any:
        if self._sock is not None:
            return self._sock
        self.reused = False
        self.connected = False
        timeout = max(self.remaining(), 0.001)
        if self.https:
            self._sock = _tls_connect(self.host, self.port, timeout)
        else:
            self._sock = _tcp_connect(self.host, self.port, timeout)
        self._buffer = b""
        return self._sock

    def _fill(self, sock: Any) -> bool:
        if self.remaining() <= 0:
            raise TimeoutError("deadline passed")
        sock.settimeout(max(self.remaining(), 0.001))
        chunk = sock.recv(65536)
        if not chunk:
            return False
        self.received = True
        self._buffer += chunk
        return True

    def _need(self, sock: Any) -> None:
        if not self._fill(sock):
            raise ConnectionResetError("the server closed the connection")

    def _read_until(self, sock: Any, marker: bytes) -> bytes:
        while marker not in self._buffer:
            self._need(sock)
        head, _, self._buffer = self._buffer.partition(marker)
        return head

    def _read_exactly(self, sock: Any, size: int) -> bytes:
        while len(self._buffer) < size:
            self._need(sock)
        data, self._buffer = self._buffer[:size], self._buffer[size:]
        return data

    def _read_to_close(self, sock: Any) -> bytes:
        while self._fill(sock):
            pass
        data, self._buffer = self._buffer, b""
        return data

    def _read_chunked(self, sock: Any) -> bytes:
        parts: list[bytes] = []
        while True:
            size = int(self._read_until(sock, b"\r\n").split(b";")[0], 16)
            if size == 0:
                self._read_until(sock, b"\r\n")
                return b"".join(parts)
            parts.append(self._read_exactly(sock, size))
            self._read_exactly(sock, 2)

    def close(self) -> None:
        sock, self._sock = self._sock, None
        self._buffer = b""
        self.reused = False
        if sock is not None:
            sock.close()


def _tcp_connect(host: str, port: int, timeout: float) -> Any:
    """``socket.create_connection`` on ``_socket``: each address in turn, the last error raised."""
    error: OSError | None = None
    # An ASCII name as bytes: a str goes through the IDNA codec, slow to import.
    name: str | bytes = host.encode("ascii") if host.isascii() else host
    for family, kind, proto, _, address in _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM):
        sock = _socket.socket(family, kind, proto)
        try:
            sock.settimeout(timeout)
            sock.connect(address)
            sock.setsockopt(_socket.IPPROTO_TCP, _socket.TCP_NODELAY, 1)
            return sock
        except OSError as exc:
            sock.close()
            error = exc
    raise error or OSError(f"no address for {host}")


def _tls_connect(host: str, port: int, timeout: float) -> Any:
    import socket
    import ssl

    raw = socket.create_connection((host, port), timeout=timeout)
    return ssl.create_default_context().wrap_socket(raw, server_hostname=host)


class Transport:
    """The hook client's requests: JSON in and out, one deadline, given up once unreachable."""

    def __init__(self, base_url: str, token: str | None, deadline: float) -> None:
        try:
            scheme, host, port, self._prefix = split_url(base_url)
        except ValueError as exc:
            raise Unreachable(str(exc)) from None
        self._conn = Connection(host, port, scheme == "https", deadline)
        self._host = f"{host}:{port}"
        self._token = token
        self.down = False

    @property
    def deadline(self) -> float:
        return self._conn.deadline

    def remaining(self) -> float:
        return self._conn.remaining()

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
            target += "?" + "&".join(f"{quote(k)}={quote(str(v))}" for k, v in params.items())
        data = b"" if body is None else dumps(body).encode("utf-8")
        try:
            status, raw = self._conn.exchange(self._headers(method, target, len(data)), data)
        except (OSError, ValueError) as exc:
            self.down = True
            raise Unreachable(f"{type(exc).__name__}: {exc}") from None
        try:
            payload = loads(raw) if raw else None
        except ValueError:
            payload = None
        return status, payload

    def _headers(self, method: str, target: str, length: int) -> bytes:
        lines = [
            f"{method} {target} HTTP/1.1",
            f"Host: {self._host}",
            "Content-Type: application/json",
            f"Content-Length: {length}",
            "Connection: keep-alive",
        ]
        if self._token:
            lines.append(f"Authorization: Bearer {self._token}")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def close(self) -> None:
        self._conn.close()
