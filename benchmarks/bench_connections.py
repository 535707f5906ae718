"""How a real server copes with slow-loris and idle sockets, against stock uvicorn.

    python benchmarks/bench_connections.py [--sockets 500] [--samples 30]

For each server (``ai-memory serve`` with its connection limits, and the same
app under stock uvicorn h11 as it was served before them) this prints:

* how long one silent socket and one slow-loris socket (a header line every
  0.5 s) stay open, up to a 20 s cap;
* how many of ``--sockets`` slow-loris sockets are still open after 10 s;
* /healthz latency (new connection per request, p50/p95/max) with no other
  sockets, with ``--sockets`` idle sockets open, and while ``--sockets``
  clients keep asking for the project list as fast as they are answered
  (what they got back: 200s and 503s).
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import Server, free_port, fresh_data_dir, percentile

CAP_S = 20.0
STOCK = """
import sys, uvicorn
from ai_memory.config import Config
from ai_memory.maintenance.init import read_token
from ai_memory.server import create_app
config = Config.load(sys.argv[1], {})
config.server.bind = f"127.0.0.1:{sys.argv[2]}"
app = create_app(config, read_token(config.token_file))
uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), http="h11", log_level="error")
"""


class StockServer(Server):
    """The same app under stock uvicorn (no header deadline, no connection cap)."""

    def __enter__(self) -> StockServer:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, "-c", STOCK, str(self.data_dir), str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(600):
            if healthz_once(self.port) is not None:
                return self
            time.sleep(0.05)
        raise RuntimeError("stock server did not start")


def healthz_once(port: int) -> float | None:
    """Seconds for one GET /healthz on a new connection; None when it failed."""
    start = time.perf_counter()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            data = b""
            while chunk := sock.recv(4096):
                data += chunk
    except OSError:
        return None
    return time.perf_counter() - start if data.startswith(b"HTTP/1.1 200") else None


def survival(port: int, dribble: bool) -> float:
    """Seconds until the server closes a socket that never finishes its headers (capped)."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.settimeout(0.5)
        if dribble:
            sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        while time.monotonic() - start < CAP_S:
            try:
                if dribble:
                    sock.sendall(b"X-Slow: 1\r\n")
                if sock.recv(4096) == b"":
                    break
            except TimeoutError:
                continue
            except OSError:
                break
    return time.monotonic() - start


def loris_left(port: int, count: int, wait_s: float) -> int:
    """Open ``count`` slow-loris sockets, keep dribbling for ``wait_s``; how many stay open."""
    socks = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port))
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        sock.setblocking(False)
        socks.append(sock)
    open_ = set(socks)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        for sock in list(open_):
            try:
                sock.send(b"X-Slow: 1\r\n")
                if sock.recv(4096) == b"":
                    open_.discard(sock)
            except BlockingIOError:
                continue
            except OSError:
                open_.discard(sock)
        time.sleep(0.5)
    for sock in socks:
        sock.close()
    return len(open_)


def latency(port: int, samples: int) -> str:
    times = [healthz_once(port) for _ in range(samples)]
    ok = [t * 1000 for t in times if t is not None]
    if not ok:
        return f"0/{samples} answered"
    return (
        f"{len(ok)}/{samples} answered, p50 {percentile(ok, 0.5):.1f} ms, "
        f"p95 {percentile(ok, 0.95):.1f} ms, max {max(ok):.1f} ms"
    )


async def hammer(port: int, token: str, clients: int, stop: threading.Event) -> Counter[str]:
    """``clients`` keep-alive connections asking for the project list until ``stop``."""
    request = (
        f"GET /api/v1/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\r\n"
    ).encode()
    seen: Counter[str] = Counter()

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        """One request and its answer; False when the connection is done."""
        writer.write(request)
        status_line = await reader.readline()
        if not status_line:
            return False
        length, close = 0, False
        while (line := (await reader.readline()).lower()) not in (b"\r\n", b""):
            name, _, value = line.partition(b":")
            if name == b"content-length":
                length = int(value)
            close = close or (name == b"connection" and b"close" in value)
        await reader.readexactly(length)
        seen[status_line.split(b" ")[1].decode()] += 1
        return not close

    async def client() -> None:
        while not stop.is_set():
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                seen["connect failed"] += 1
                await asyncio.sleep(0.01)
                continue
            try:
                while not stop.is_set() and await one(reader, writer):
                    pass
            except (OSError, asyncio.IncompleteReadError):
                pass
            seen["closed by server"] += not stop.is_set()
            writer.close()

    await asyncio.gather(*(client() for _ in range(clients)))
    return seen


def under_load(server: Server, clients: int, samples: int) -> str:
    stop = threading.Event()
    result: list[Counter[str]] = []
    thread = threading.Thread(
        target=lambda: result.append(asyncio.run(hammer(server.port, server.token, clients, stop)))
    )
    thread.start()
    time.sleep(2.0)
    try:
        measured = latency(server.port, samples)
    finally:
        stop.set()
        thread.join()
    answers = ", ".join(f"{n} x {status}" for status, n in sorted(result[0].items()))
    return f"{measured}\n      the {clients} clients got: {answers}"


def measure(name: str, server: Server, sockets: int, samples: int) -> None:
    print(f"== {name}")
    silent, slow = survival(server.port, dribble=False), survival(server.port, dribble=True)
    print(f"  silent socket open for     {silent:.1f} s (cap {CAP_S:.0f})")
    print(f"  slow-loris socket open for {slow:.1f} s (cap {CAP_S:.0f})")
    left = loris_left(server.port, sockets, 10.0)
    print(f"  slow-loris sockets open after 10 s: {left}/{sockets}")
    print(f"  /healthz, no other sockets:      {latency(server.port, samples)}")
    idle = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(sockets)]
    try:
        print(f"  /healthz, {sockets} idle sockets open: {latency(server.port, samples)}")
    finally:
        for sock in idle:
            sock.close()
    print(f"  /healthz, {sockets} busy clients:  {under_load(server, sockets, samples)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sockets", type=int, default=500)
    parser.add_argument("--samples", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        guarded = fresh_data_dir(Path(tmp), "guarded")
        with Server(guarded) as server:
            measure("ai-memory serve (defaults)", server, args.sockets, args.samples)
        stock = fresh_data_dir(Path(tmp), "stock")
        with StockServer(stock) as server:
            measure("stock uvicorn h11 (as before)", server, args.sockets, args.samples)


if __name__ == "__main__":
    main()
