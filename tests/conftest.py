"""Shared fixtures: real data dirs, and real servers on free loopback ports."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import httpx
import pytest

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise, read_token
from ai_memory.runtime import Runtime

AI_MEMORY = [sys.executable, "-m", "ai_memory"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Slow files first: with a file per worker, a long file that starts last runs alone."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@cache
def tls_context() -> ssl.SSLContext:
    """One TLS context for every test client: a new httpx client otherwise loads the CA
    bundle again (~50 ms of CPU each), though these clients speak plain HTTP to loopback."""
    return ssl.create_default_context()


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AI_MEMORY_")}
    env.update(extra)
    return env


@dataclass
class ServerProcess:
    """A real ``ai-memory serve`` subprocess on a free loopback port."""

    data_dir: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    env: dict[str, str] = field(default_factory=clean_env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        token = read_token(self.data_dir / "auth-tokens" / "default")
        assert token is not None
        return token

    def client(self, timeout: float = 30.0) -> httpx.Client:
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=timeout,
            verify=tls_context(),
        )

    def start(self) -> ServerProcess:
        log = open(self.data_dir / "test-server.log", "ab")  # noqa: SIM115
        self.process = subprocess.Popen(
            [
                *AI_MEMORY,
                "serve",
                "--data-dir",
                str(self.data_dir),
                "--bind",
                f"127.0.0.1:{self.port}",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=self.env,
        )
        deadline = time.monotonic() + 60
        with self.client(timeout=1) as client:
            while time.monotonic() < deadline:
                if self.process.poll() is not None:
                    raise RuntimeError(
                        f"server exited with {self.process.returncode}: "
                        + (self.data_dir / "test-server.log").read_text(errors="replace")[-2000:]
                    )
                if self.listening() and self.healthy(client):
                    return self.settled(client, deadline)
                time.sleep(0.02)
        raise RuntimeError("server did not become healthy in 60 s")

    def listening(self) -> bool:
        """A bare connect: polling with HTTP requests would cost the test process more CPU
        than the server's start-up while it imports."""
        with socket.socket() as probe:
            return probe.connect_ex(("127.0.0.1", self.port)) == 0

    @staticmethod
    def healthy(client: httpx.Client) -> bool:
        try:
            return client.get("/healthz").status_code == 200
        except httpx.TransportError:
            return False

    def settled(self, client: httpx.Client, deadline: float) -> ServerProcess:
        """Wait for the MCP endpoint, which the server builds once it answers: until it
        is built, requests share the interpreter with the build and answer slower than
        a hook's network budget, which tests that time nothing should not depend on."""
        ping = {"jsonrpc": "2.0", "id": 0, "method": "ping"}
        headers = {"Accept": "application/json, text/event-stream"}
        client.post("/mcp", json=ping, headers=headers, timeout=max(deadline - time.monotonic(), 1))
        return self

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait()


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    return root


def serving(data_dir: Path) -> Iterator[ServerProcess]:
    proc = ServerProcess(data_dir).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture
def server(data_dir: Path) -> Iterator[ServerProcess]:
    yield from serving(data_dir)


@pytest.fixture
def own_server(data_dir: Path) -> Iterator[ServerProcess]:
    """The test's own server, in a file whose ``server`` is shared: for a test that stops
    it or needs a data dir no other test wrote to."""
    yield from serving(data_dir)


@contextmanager
def shared_server(
    factory: pytest.TempPathFactory, name: str, env: dict[str, str] | None = None
) -> Iterator[ServerProcess]:
    """A server on its own data dir for a module-scoped fixture: a start costs seconds of
    CPU, so a file whose tests keep to their own projects or sessions shares one."""
    root = factory.mktemp(name) / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root, env=env or clean_env()).start()
    try:
        yield proc
    finally:
        proc.stop()


def run_cli(
    *args: str,
    data_dir: Path,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run the real ``ai-memory`` command line."""
    return subprocess.run(
        [*AI_MEMORY, *args, "--data-dir", str(data_dir)],
        input=input,
        capture_output=True,
        env=env or clean_env(),
        cwd=cwd,
        timeout=120,
    )


def run_cli_here(
    *args: str,
    data_dir: Path,
    input: bytes | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """:func:`run_cli` in this process, through the console entry (``entry.main``: its
    parsing, its error lines and exit codes), in ``env`` alone: a subprocess pays a
    second of CPU for start-up, which only a test of the installed command needs."""
    from click.testing import CliRunner

    from ai_memory.cli.entry import main

    wanted = env or clean_env()
    only = {**{name: None for name in os.environ if name not in wanted}, **wanted}
    argv, folder = sys.argv, os.getcwd()
    with CliRunner().isolation(input=input, env=only) as (stdout, stderr, _):
        sys.argv = ["ai-memory", *args, "--data-dir", str(data_dir)]
        try:
            if cwd is not None:
                os.chdir(cwd)
            main()
            code: int = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
            if isinstance(exc.code, str):  # as the interpreter prints it
                print(exc.code, file=sys.stderr)
        finally:
            sys.argv = argv
            os.chdir(folder)
            sys.stdout.flush()  # plain writes wait in the wrapper's buffer
            sys.stderr.flush()
        shown = stdout.getvalue(), stderr.getvalue()
    return subprocess.CompletedProcess(sys.argv[:1] + list(args), code, *shown)


@pytest.fixture
def runtime(data_dir: Path) -> Iterator[Runtime]:
    """The data dir's parts running in this process (no HTTP)."""
    started = Runtime.start(Config.load(data_dir, {}))
    try:
        yield started
    finally:
        started.stop()


EVIL_BODY = """# Evil

<script>document.body.setAttribute('data-pwned', 'script')</script>
<img src="x" onerror="document.body.setAttribute('data-pwned', 'img')">
[click me](javascript:document.body.setAttribute('data-pwned','link'))
[[concepts/wal.md|the wal page]] and [raw](JAVASCRIPT:alert(1))
"""


@pytest.fixture(scope="session")
def web_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """One server for the web UI tests, holding pages, a session and a handoff."""
    root = tmp_path_factory.mktemp("web") / "data"
    initialise(Config.load(root, {}))
    proc = ServerProcess(root).start()
    try:
        with proc.client() as client:
            seed_web_content(client)
        yield proc
    finally:
        proc.stop()


def seed_web_content(client: httpx.Client) -> None:
    pages = "/api/v1/projects/default/api/pages"
    writes = [
        ("concepts/wal.md", {"body": "WAL lets readers proceed while one writer commits."}),
        (
            "concepts/wal.md",
            {"body": "WAL lets readers proceed while the single writer commits.", "title": "WAL"},
        ),
        (
            "decisions/db.md",
            {
                "body": "# Database\n\nWe chose SQLite; see [[concepts/wal.md]] "
                "and [[gotchas/later.md]].",
                "title": "Use SQLite",
                "tags": ["storage"],
                "pinned": True,
            },
        ),
        (
            "notes/evil.md",
            {"body": EVIL_BODY, "title": "<script>alert('title')</script>", "summary": "<b>x</b>"},
        ),
    ]
    for path, body in writes:
        seeded(client.put(f"{pages}/{path}", json=body))
    release = {"body": "Tag, build, publish the release."}
    seeded(client.put("/api/v1/projects/default/web/pages/procedures/release.md", json=release))
    hook = {"workspace": "default", "project": "api", "agent": "claude-code", "session_id": "s-1"}
    prompt = {"hook_event_name": "UserPromptSubmit", "prompt": "fix the cart"}
    seeded(client.post("/hook", params=hook, json=prompt))
    for event in SESSION_EVENTS:
        seeded(client.post("/hook", params=hook, json=event))
    handoff = {
        "project": "api",
        "summary": "finish the <b>cart</b> page",
        "next_steps": ["wire the cart total", "add the checkout test"],
        "open_questions": ["do we keep guest carts?"],
    }
    seeded(client.post("/api/v1/handoffs", json=handoff))


SESSION_EVENTS = [
    {
        "hook_event_name": "PostToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "pytest -q tests/test_cart.py", "description": "run tests"},
        "tool_response": {"stdout": "1 failed", "exit_code": 1},
    },
    {
        "hook_event_name": "PostToolUse",
        "tool_name": "Edit",
        "tool_input": {"file_path": "src/cart.py", "old_string": "a", "new_string": "b"},
        "tool_response": {"success": True},
    },
    {"hook_event_name": "Stop", "last_assistant_message": "Fixed the cart: the total now rounds."},
]


def seeded(response: httpx.Response) -> None:
    assert response.is_success, (response.request.url, response.status_code, response.text)


@pytest.fixture
def schema_conn(tmp_path: Path) -> Iterator[sqlite3.Connection]:
    """A writing connection to a fresh database at the current schema (for query plans)."""
    from ai_memory.store.db import connect_writer
    from ai_memory.store.migrations import migrate

    connection = connect_writer(tmp_path / "plans.sqlite", "normal")
    migrate(connection)
    try:
        yield connection
    finally:
        connection.close()
