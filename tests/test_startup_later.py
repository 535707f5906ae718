"""What the server builds after its first answers, when, and what it starts before its imports."""

from __future__ import annotations

import gc
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path

import anyio
import httpx
import pytest
from starlette.types import Message, Receive, Scope, Send

from ai_memory.config import Config
from ai_memory.core.errors import NotInitialised
from ai_memory.runtime import EarlyStart, Runtime
from ai_memory.web.later import LaterStart
from tests.conftest import ServerProcess, clean_env, run_cli_here

APP_MODULES = """
import sys
from pathlib import Path
from ai_memory.config import Config
from ai_memory.server import create_app
app = create_app(Config.load(Path(sys.argv[1]), {}), "token", defer=sys.argv[2] == "defer")
print(sorted(m for m in sys.modules if m in {"ai_memory.web.ui", "ai_memory.web.identity_api",
    "ai_memory.web.admin", "jinja2", "ai_memory.web.api"}))
"""


class Unsettled(ServerProcess):
    """Returns as soon as /healthz answers, without waiting for anything built after."""

    def settled(self, client: httpx.Client, deadline: float) -> ServerProcess:
        return self


def loaded(data_dir: Path, mode: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", APP_MODULES, str(data_dir), mode],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
        check=True,
    )
    return done.stdout.strip()


def test_a_deferring_app_answers_without_the_later_routers_loaded(data_dir: Path) -> None:
    assert loaded(data_dir, "defer") == "['ai_memory.web.api']"
    eager = ["ai_memory.web.admin", "ai_memory.web.api", "ai_memory.web.identity_api"]
    assert loaded(data_dir, "eager") == str([*eager, "ai_memory.web.ui"])


def test_routes_asked_for_before_they_are_built_wait_for_them(data_dir: Path) -> None:
    """Right after /healthz the later routers are likely still building: every request
    is answered as it would be once they are in (200 for a route, 404 for no route)."""
    server = Unsettled(data_dir).start()
    paths = ["/admin/status", "/api/v1/whoami", "/api/v1/pending-writes", "/api/v1/nope", "/nope"]
    try:
        with server.client() as client, ThreadPoolExecutor(len(paths)) as pool:
            codes = list(pool.map(lambda path: client.get(path).status_code, paths))
            status = client.get("/api/v1/status")
            login = client.get("/web/login")
    finally:
        server.stop()
    assert codes == [200, 200, 200, 404, 404]
    assert status.status_code == 200 and "pages" in status.text
    assert login.status_code == 200 and "<form" in login.text


def test_an_early_start_hands_over_its_runtime_or_its_error(data_dir: Path, tmp_path: Path) -> None:
    config = Config.load(data_dir, {})
    runtime = EarlyStart(partial(Runtime.start, config)).take()
    try:
        assert runtime.startup_report is not None
    finally:
        runtime.stop()
    missing = EarlyStart(partial(Runtime.start, Config.load(tmp_path / "none", {})))
    with pytest.raises(NotInitialised):
        missing.take()


def test_a_start_nobody_takes_is_stopped(data_dir: Path) -> None:
    config = Config.load(data_dir, {})
    EarlyStart(partial(Runtime.start, config)).discard()
    wal = config.db_path.with_name(config.db_path.name + "-wal")
    assert not wal.exists()  # every connection closed: the runtime stopped


def test_serve_leaves_collection_on_when_it_refuses_to_start(data_dir: Path) -> None:
    done = run_cli_here("serve", "--bind", "0.0.0.0:9", data_dir=data_dir)
    assert done.returncode != 0 and b"allow-remote" in done.stderr
    assert gc.isenabled()


def test_the_start_removes_a_crash_s_temp_files_beside_pages_only(data_dir: Path) -> None:
    """Temp files are made beside pages; a dot-folder (git's, an editor's) holds none."""
    wiki = Config.load(data_dir, {}).wiki_dir
    beside_page = wiki / "default/api/notes/.tmp-a.md.0123abcd"
    editor = wiki / ".obsidian/.tmp-workspace.json"
    for file in (beside_page, editor):
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("half a write")
    Runtime.start(Config.load(data_dir, {})).stop()
    assert not beside_page.exists()
    assert editor.read_text() == "half a write"


async def _answer_when(release: anyio.Event, scope: Scope, receive: Receive, send: Send) -> None:
    await release.wait()


def test_the_later_builds_wait_for_the_first_answers() -> None:
    """A build waits while a request is in flight, begins once the server is quiet, and
    once one build has begun every other begins too."""

    async def scenario() -> list[str]:
        start = LaterStart(quiet_s=0.5, latest_s=60)
        release = anyio.Event()
        app = start.track(partial(_answer_when, release))
        order: list[str] = []

        async def request() -> None:
            await app({"type": "http"}, _no_body, _ignore)
            order.append("answered")

        async def build(name: str) -> None:
            await start.wait(lambda: False)
            order.append(name)

        async with anyio.create_task_group() as group:
            group.start_soon(build, "first built")
            await anyio.sleep(0)  # the build is waiting before the request comes
            group.start_soon(request)
            await anyio.sleep(0.05)
            assert start.in_flight == 1  # counted: a build was waiting when it came
            order.append("released")
            release.set()
        async with anyio.create_task_group() as group:
            group.start_soon(build, "second built")  # begins at once: the first has begun
        return order

    assert anyio.run(scenario) == ["released", "answered", "first built", "second built"]


def test_a_build_that_is_wanted_or_waited_for_long_enough_begins_during_a_request() -> None:
    async def scenario(wanted: bool) -> list[str]:
        start = LaterStart(quiet_s=60, latest_s=60 if wanted else 0.05)
        release = anyio.Event()
        app = start.track(partial(_answer_when, release))
        order: list[str] = []

        async def build() -> None:
            await start.wait(lambda: wanted)
            order.append("built")
            release.set()

        async with anyio.create_task_group() as group:
            group.start_soon(build)
            await anyio.sleep(0)  # the build is waiting before the request comes
            await app({"type": "http"}, _no_body, _ignore)
            order.append("answered")
        return order

    assert anyio.run(scenario, True) == ["built", "answered"]
    assert anyio.run(scenario, False) == ["built", "answered"]


async def _no_body() -> Message:
    return {"type": "http.request", "body": b""}


async def _ignore(message: Message) -> None:
    return None


def test_a_start_left_unsettled_commits_what_a_crash_left_once_settled(data_dir: Path) -> None:
    """The server's start leaves git's recovery commit until its first answers are out."""
    import pygit2

    config = Config.load(data_dir, {})
    leftover = config.wiki_dir / "default" / "api" / "left-by-a-crash.txt"
    leftover.parent.mkdir(parents=True)
    leftover.write_text("not a page: only git's recovery commits it\n")

    def committed() -> bool:
        repo = pygit2.Repository(str(config.wiki_dir))
        return "default/api/left-by-a-crash.txt" in repo.head.peel(pygit2.Commit).tree

    runtime = Runtime.start(config, settle=False)
    try:
        assert runtime.unsettled and not committed()
        assert "sanitizer" not in vars(runtime)  # compiled by the first event, or by settle
        runtime.settle()
        assert not runtime.unsettled and committed() and "sanitizer" in vars(runtime)
        runtime.settle()  # once only
    finally:
        runtime.stop()
