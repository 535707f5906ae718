"""A minimal keep-alive HTTP/1.1 client, so a benchmark measures the server, not httpx.

It reconnects when an answer says ``Connection: close`` (the server closes a
connection after ``server.max_requests_per_connection`` requests) or when the
server closed an idle connection before the next request went out.
"""

from __future__ import annotations

import asyncio


class Connection:
    """One connection to the server on ``127.0.0.1:port``, reopened when the server ends it."""

    def __init__(self, port: int, token: str) -> None:
        self.port = port
        self.token = token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reconnects = 0

    async def post(self, target: str, body: bytes) -> tuple[int, bytes]:
        return await self.request("POST", target, body)

    async def put(self, target: str, body: bytes) -> tuple[int, bytes]:
        return await self.request("PUT", target, body)

    async def request(self, method: str, target: str, body: bytes) -> tuple[int, bytes]:
        """Send one request and read its answer; a connection the server had already closed
        (before any byte of an answer) is reopened and the request sent once more."""
        fresh = self.writer is None
        if fresh:
            await self._open()
        answer = await self._exchange(method, target, body)
        if answer is None and not fresh:
            self.close()
            await self._open()
            self.reconnects += 1
            answer = await self._exchange(method, target, body)
        if answer is None:
            raise ConnectionError(f"{method} {target}: the server closed the connection")
        return answer

    async def _open(self) -> None:
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def _exchange(self, method: str, target: str, body: bytes) -> tuple[int, bytes] | None:
        assert self.reader is not None and self.writer is not None
        head = (
            f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {self.token}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        )
        try:
            self.writer.write(head.encode() + body)
            top = await self.reader.readuntil(b"\r\n\r\n")
        except ConnectionError:
            return None
        except asyncio.IncompleteReadError as exc:
            if exc.partial:  # an answer cut short is the server's failure, not a closed idle
                raise
            return None
        # One read of the status line and headers, parsed at once: the client shares the
        # machine with the server, and a read per line cost it more than the parsing.
        status_line, *lines = top[:-4].split(b"\r\n")
        length = 0
        closing = False
        for line in lines:
            name, _, value = line.partition(b":")
            name = name.strip().lower()
            if name == b"content-length":
                length = int(value)
            elif name == b"connection" and value.strip().lower() == b"close":
                closing = True
        payload = await self.reader.readexactly(length)
        if closing:
            self.close()
        return int(status_line.split()[1]), payload

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None
