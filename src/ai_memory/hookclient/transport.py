"""A tiny HTTP client on ``http.client`` with one deadline for every request it makes."""

from __future__ import annotations

import http.client
import json
import time
from typing import Any
from urllib.parse import urlencode, urlsplit


class Unreachable(Exception):
    """The server could not be reached, or did not answer before the deadline."""


class Transport:
    def __init__(self, base_url: str, token: str | None, deadline: float) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise Unreachable(f"server URL {base_url!r} is not http(s)://host:port")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._headers = {"Content-Type": "application/json"}
        if token:
            self._headers["Authorization"] = f"Bearer {token}"
        self.deadline = deadline
        self._conn: http.client.HTTPConnection | None = None
        self.down = False

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def request(
        self, method: str, path: str, params: dict[str, str], body: Any = None
    ) -> tuple[int, Any]:
        """Return (status, decoded JSON or None); raise :class:`Unreachable` on any failure."""
        if self.down:
            raise Unreachable("server already found unreachable")
        left = self.remaining()
        if left <= 0.005:
            raise Unreachable("out of time")
        url = f"{self._prefix}{path}"
        if params:
            url += "?" + urlencode(params)
        data = None if body is None else json.dumps(body, ensure_ascii=False).encode("utf-8")
        try:
            conn = self._connection(left)
            conn.request(method, url, body=data, headers=self._headers)
            response = conn.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            self.down = True
            raise Unreachable(f"{type(exc).__name__}: {exc}") from None
        try:
            payload = json.loads(raw) if raw else None
        except ValueError:
            payload = None
        return response.status, payload

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        if self._conn is None:
            if self._https:
                self._conn = http.client.HTTPSConnection(self._host, self._port, timeout=timeout)
            else:
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=timeout)
        else:
            self._conn.timeout = timeout
            if self._conn.sock is not None:
                self._conn.sock.settimeout(timeout)
        return self._conn

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
