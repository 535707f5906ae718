"""Hand edits made while the server runs are indexed; its own writes are not doubled."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ai_memory.config import Config
from ai_memory.maintenance.init import initialise
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
