"""Helpers the benchmark scripts share: temp data dirs, a real server, synthetic text."""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise, read_token

VOCABULARY = """
memory agent session page index query writer reader commit branch merge config token
server client hook event prompt tool file path project workspace search vector entity
link graph rank score fusion cache schema table column migration backup restore lock
thread queue batch latency budget decision concept gotcha procedure rule slot note
"""
WORDS = tuple(VOCABULARY.split())


def words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randrange(50)) for _ in range(count))


def fresh_data_dir(root: Path, name: str) -> Path:
    data_dir = root / name
    initialise(Config.load(data_dir, {}))
    return data_dir


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Server:
    """A real ``ai-memory serve`` subprocess for the length of a ``with`` block."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def token(self) -> str:
        token = read_token(self.data_dir / "auth-tokens" / "default")
        assert token
        return token

    def client(self, **kwargs: object) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=60,
            **kwargs,  # type: ignore[arg-type]
        )

    def __enter__(self) -> Server:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ai_memory",
                "serve",
                "--data-dir",
                str(self.data_dir),
                "--bind",
                f"127.0.0.1:{self.port}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        for _ in range(600):
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                time.sleep(0.05)
        raise RuntimeError("server did not start")

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=120)


def settle(pid: int, most_s: float = 20.0) -> None:
    """Wait until the server is idle (what earlier writes set off, like git checkpoints,
    has finished), so it is not counted against what is timed next."""
    deadline = time.monotonic() + most_s
    while time.monotonic() < deadline:
        used = server_cpu_ms(pid)
        time.sleep(0.3)
        if server_cpu_ms(pid) - used <= 10:  # at most one clock tick or so in 0.3 s
            return


def server_cpu_ms(pid: int) -> float:
    """CPU time the server process (every thread) has used so far, from /proc (Linux)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def dir_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())
