"""Nothing acknowledged is lost when the server dies with SIGKILL."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import httpx
import pygit2

from tests.conftest import ServerProcess, run_cli

PAGES = "/api/v1/projects/default/crash/pages"


def stream_writes(
    server: ServerProcess, worker: int, acked: list[tuple[str, str]], stop: threading.Event
) -> None:
    with server.client(timeout=10) as client:
        for i in range(100_000):
            if stop.is_set():
                return
            path, body = f"w{worker}/p{i}.md", f"worker {worker} write {i}"
            try:
                answer = client.put(f"{PAGES}/{path}", json={"body": body})
            except httpx.TransportError:
                return
            if answer.status_code == 200:
                acked.append((path, body))


def test_acknowledged_writes_survive_sigkill(server: ServerProcess) -> None:
    acked: list[tuple[str, str]] = []
    stop = threading.Event()
    threads = [
        threading.Thread(target=stream_writes, args=(server, n, acked, stop)) for n in range(4)
    ]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + 60
    while len(acked) < 300 and time.monotonic() < deadline:
        time.sleep(0.01)
    server.kill()
    stop.set()
    for thread in threads:
        thread.join()
    assert len(acked) >= 300

    server.start()
    with server.client() as client:
        for path, body in acked:
            page = client.get(f"{PAGES}/{path}").json()
            assert page.get("body") == body, (path, page)
            file = server.data_dir / "wiki/default/crash" / path
            assert file.read_text().endswith(body)
    server.stop()

    conn = sqlite3.connect(server.data_dir / "db/memory.sqlite")
    latest = conn.execute("SELECT count(*) FROM pages WHERE is_latest = 1").fetchone()[0]
    conn.close()
    files = list((server.data_dir / "wiki/default/crash").rglob("*.md"))
    assert latest == len(files) >= len(acked)
    result = run_cli("reindex", data_dir=server.data_dir)
    assert result.returncode == 0, result.stderr
    assert b"0 added, 0 updated, 0 removed" in result.stdout


def test_startup_recovers_a_file_written_without_its_index_row(data_dir: Path) -> None:
    orphan = data_dir / "wiki/default/crash/notes/orphan.md"
    orphan.parent.mkdir(parents=True)
    orphan.write_text("---\ntitle: Orphan\n---\nwritten just before a crash\n")
    server = ServerProcess(data_dir).start()
    try:
        with server.client() as client:
            page = client.get(f"{PAGES}/notes/orphan.md").json()
    finally:
        server.stop()
    assert page["title"] == "Orphan" and "before a crash" in page["body"]
    repo = pygit2.Repository(str(data_dir / "wiki"))
    tree = repo.head.peel(pygit2.Commit).tree
    assert "default/crash/notes/orphan.md" in tree  # the crash's leftover was checkpointed
    assert not [path for path in repo.status() if not path.startswith(".")]
