"""Hand edits made while the server runs are indexed; its own writes are not doubled."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.maintenance.init import initialise
from ai_memory.runtime import Runtime
from ai_memory.wiki.indexed import indexed_under
from tests.conftest import ServerProcess

PAGES = "/api/v1/projects/default/notes/pages"


def eventually(check: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def test_hand_edits_are_indexed_and_own_writes_are_not_repeated(server: ServerProcess) -> None:
    folder = server.data_dir / "wiki/default/notes/concepts"
    with server.client() as client:
        for i in range(3):
            client.put(f"{PAGES}/concepts/api{i}.md", json={"body": f"api {i}"}).raise_for_status()
        (folder / "hand.md").write_text("# Hand\n\nwritten in an editor\n")
        assert eventually(lambda: client.get(f"{PAGES}/concepts/hand.md").status_code == 200)
        page = client.get(f"{PAGES}/concepts/hand.md").json()
        assert page["title"] == "Hand" and "editor" in page["body"]

        (folder / "hand.md").write_text("# Hand\n\nedited again\n")
        assert eventually(
            lambda: "edited again" in client.get(f"{PAGES}/concepts/hand.md").json()["body"]
        )
        (folder / "api0.md").unlink()
        assert eventually(lambda: client.get(f"{PAGES}/concepts/api0.md").status_code == 404)
        for i in (1, 2):
            history = client.get(f"/api/v1/projects/default/notes/history/concepts/api{i}.md")
            assert [v["actor"] for v in history.json()["versions"]] == ["api"]


def test_a_data_dir_under_a_hidden_folder_and_folder_moves(tmp_path: Path) -> None:
    data_dir = tmp_path / ".local/share/ai-memory"
    initialise(Config.load(data_dir, {}))
    server = ServerProcess(data_dir).start()
    try:
        project = data_dir / "wiki/default/notes"
        (project / "drafts").mkdir(parents=True)
        (project / "drafts/a.md").write_text("first draft")
        with server.client() as client:
            assert eventually(lambda: client.get(f"{PAGES}/drafts/a.md").status_code == 200)
            (project / "drafts").rename(project / "final")
            assert eventually(lambda: client.get(f"{PAGES}/final/a.md").status_code == 200)
            assert eventually(lambda: client.get(f"{PAGES}/drafts/a.md").status_code == 404)
            assert client.get(f"{PAGES}/final/a.md").json()["body"] == "first draft"
    finally:
        server.stop()


def test_a_hand_edit_right_after_the_servers_own_write_is_indexed(server: ServerProcess) -> None:
    folder = server.data_dir / "wiki/default/notes/burst"
    with server.client() as client:
        for i in range(20):
            answer = client.put(f"{PAGES}/burst/p{i}.md", json={"body": f"server {i:02d}"})
            assert answer.status_code == 200
            if i % 2 == 0:  # at once, often inside the same batch of events as the write
                file = folder / f"p{i}.md"
                file.write_text(file.read_text().replace(f"server {i:02d}", f"hand   {i:02d}"))

        def body(i: int) -> str:
            return str(client.get(f"{PAGES}/burst/p{i}.md").json()["body"])

        assert eventually(lambda: all(f"hand   {i:02d}" in body(i) for i in range(0, 20, 2)))
        for i in range(20):
            history = client.get(f"/api/v1/projects/default/notes/history/burst/p{i}.md")
            actors = [v["actor"] for v in history.json()["versions"]]
            assert actors == (["disk", "api"] if i % 2 == 0 else ["api"]), (i, actors)


def test_the_pages_under_a_folder_come_from_its_range_of_the_index(runtime: Runtime) -> None:
    scope = Scope.of(None, "p")
    for path in ("a/b.md", "a/c/d.md", "a0.md", "ab/x.md", "b.md"):
        runtime.wiki.write_page(scope.page(path), path)
    runtime.wiki.write_page(Scope.of("other", "p").page("a/b.md"), "elsewhere")

    def under(folder: str) -> set[str]:
        return set(runtime.readers.read(partial(indexed_under, folder=folder)))

    assert under("default/p/a") == {"default/p/a/b.md", "default/p/a/c/d.md"}
    assert under("default/p/a/c/") == {"default/p/a/c/d.md"}
    assert len(under("default/p")) == 5
    assert under("other") == {"other/p/a/b.md"}
    assert under("default/q") == set()
