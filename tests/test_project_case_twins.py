"""Project names that differ only by case: one folder where the file system folds case.

On macOS, Windows, or a clone of the wiki there, ``wiki/default/FAST`` and
``wiki/default/fast`` are one folder, so a project made as ``FAST`` beside ``fast``
would write into it, with the access rules of another project. A new one is refused;
folders already on disk (a reindex) are indexed as they are.
"""

from __future__ import annotations

import json
from pathlib import Path

from ai_memory.config import Config
from ai_memory.runtime import Runtime
from tests.hooks_support import app_client

PAGES = "/api/v1/projects/default/{}/pages/notes/a.md"


def test_a_new_project_differing_only_by_case_is_refused_and_writes_nothing(
    data_dir: Path,
) -> None:
    with app_client(data_dir) as client:
        first = client.put(PAGES.format("fast"), json={"body": "# fast"})
        twin = client.put(PAGES.format("FAST"), json={"body": "# FAST"})
        hook = client.post(
            "/hook?project=Fast&agent=claude-code&session_id=s1&event=UserPromptSubmit",
            content=json.dumps({"prompt": "hello"}),
        )
        other = client.put(PAGES.format("faster"), json={"body": "# faster"})
        projects = {p["name"] for p in client.get("/api/v1/projects").json()["projects"]}
    assert first.status_code == 200, first.text
    for refused in (twin, hook):
        assert refused.status_code == 409, refused.text
        assert "differs from the project 'fast' only by case" in refused.json()["message"]
    assert other.status_code == 200
    assert projects == {"fast", "faster"}
    wiki = data_dir / "wiki" / "default"
    assert not [*(wiki / "FAST").rglob("*.md")] and not (wiki / "Fast").exists()


def test_case_twins_already_on_disk_are_indexed_as_they_are(data_dir: Path) -> None:
    for name in ("shop", "Shop"):
        page = data_dir / "wiki" / "default" / name / "notes" / "a.md"
        page.parent.mkdir(parents=True)
        page.write_text(f"# {name}\n", encoding="utf-8")
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        names = runtime.readers.read(
            lambda conn: [r[0] for r in conn.execute("SELECT name FROM projects ORDER BY name")]
        )
    finally:
        runtime.stop()
    assert {"shop", "Shop"} <= set(names)


def test_a_rename_into_another_projects_name_in_another_case_is_refused(
    data_dir: Path,
) -> None:
    with app_client(data_dir) as client:
        for name in ("fast", "other"):
            client.put(PAGES.format(name), json={"body": f"# {name}"}).raise_for_status()
        rename = "/admin/hygiene/rename-project"
        twin = client.post(rename, json={"project": "other", "new_name": "FAST"})
        case_only = client.post(rename, json={"project": "other", "new_name": "Other"})
        projects = {p["name"] for p in client.get("/api/v1/projects").json()["projects"]}
    assert twin.status_code == 409, twin.text
    assert "only by case" in twin.json()["message"]
    assert case_only.status_code == 200, case_only.text  # its own name in another case
    assert projects == {"fast", "Other"}
