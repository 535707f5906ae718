"""Reading a provider's answer within a size cap (and, for a blocking client, a deadline).

httpx's timeout bounds each read, not the whole answer: a service that sends
gigabytes, or trickles bytes in just under the read timeout, would otherwise hold
the memory and the caller for as long as it likes.
"""

from __future__ import annotations

import time

import httpx

MAX_ANSWER_BYTES = 8 * 1024 * 1024  # far above any answer a schema here allows


def declared_too_large(response: httpx.Response) -> bool:
    length = response.headers.get("content-length", "")
    return length.isdigit() and int(length) > MAX_ANSWER_BYTES


async def aread_capped(response: httpx.Response) -> bytes | None:
    """The whole body, or None as soon as it is past the cap."""
    if declared_too_large(response):
        return None
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


def read_capped(response: httpx.Response, deadline: float) -> bytes | None:
    """The whole body, or None past the cap; TimeoutError once ``time.monotonic()``
    passes ``deadline`` (checked after each chunk, each read bounded by the client)."""
    if declared_too_large(response):
        return None
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            return None
        if time.monotonic() > deadline:
            raise TimeoutError
        chunks.append(chunk)
    return b"".join(chunks)


def too_large() -> str:
    return f"the answer is larger than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB"
