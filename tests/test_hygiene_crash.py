"""A rename cut short by a crash between its file renames and its COMMIT, and two
hygiene operations at once.

The state such a SIGKILL leaves is built with the operation's own parts (its plan, its
journal, its file moves, a linking page already rewritten), then the data dir starts
again: every file is back where the index says, nothing of the target project exists,
a reindex changes nothing, and running the rename again works.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.hygiene import journal
from ai_memory.hygiene.exclusive import one_at_a_time
from ai_memory.hygiene.relocate import move_files, read_plan
from tests.hooks_support import app_client
from tests.test_hygiene_projects import (
    assert_reindex_changes_nothing,
    body_of,
    hygiene,
    populate,
    search,
)

SHOP, NEW = Scope("default", "shop"), Scope("default", "store")


def crash_mid_rename(data_dir: Path) -> dict[Path, bytes]:
    """Leave the files as carry_out has them just before the COMMIT; return the wiki
    as it was before."""
    config = Config.load(data_dir, {})
    wiki = config.wiki_dir
    before = {p: p.read_bytes() for p in wiki.rglob("*.md") if ".git" not in p.parts}
    conn = sqlite3.connect(f"file:{config.db_path}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        plan = read_plan(conn, wiki, "rename-project", SHOP, NEW)
    finally:
        conn.close()
    old_root, new_root = wiki / "default" / "shop", wiki / "default" / "store"
    pairs = [(old_root / old, new_root / new) for old, new in plan.files]
    linking = [ref for ref, _ in plan.rewrites if ref.scope != NEW]
    assert linking, "billing's page links into shop: it is rewritten"
    originals = [wiki / ref.relpath for ref in linking]
    journal.begin(journal.journal_path(config.db_path), SHOP, pairs, originals)
    move_files(pairs)
    for ref, body in plan.rewrites:
        if ref.scope != NEW:
            (wiki / ref.relpath).write_text(body)
    return before


def test_a_rename_cut_short_is_undone_at_the_next_start(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
    before = crash_mid_rename(data_dir)
    assert not (data_dir / "wiki" / "default" / "shop" / "concepts" / "cart.md").exists()

    with app_client(data_dir) as client:
        assert "shop:concepts/cart.md" in search(client, "zebrafish", "default", "shop")
        names = [p["name"] for p in client.get("/api/v1/projects").json()["projects"]]
        assert "store" not in names and "shop" in names
    wiki = data_dir / "wiki"
    after = {p: p.read_bytes() for p in wiki.rglob("*.md") if ".git" not in p.parts}
    assert after == before  # every file back, the linking page's text as it was
    assert not (wiki / "default" / "store").exists()
    assert not journal.journal_path(Config.load(data_dir, {}).db_path).exists()
    assert_reindex_changes_nothing(data_dir)

    with app_client(data_dir) as client:
        hygiene(client, "rename-project", workspace="default", project="shop", new_name="store")
        assert "store:concepts/cart.md" in search(client, "zebrafish", "default", "store")
        assert "[[store:concepts/cart.md]]" in body_of(
            client, "default", "billing", "concepts/tax.md"
        )
    assert_reindex_changes_nothing(data_dir)


def test_a_journal_left_after_the_commit_changes_nothing(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        populate(client)
        hygiene(client, "rename-project", workspace="default", project="shop", new_name="store")
    db_path = Config.load(data_dir, {}).db_path
    wiki = data_dir / "wiki"
    moved = wiki / "default" / "store" / "concepts" / "cart.md"
    pairs = [(wiki / "default" / "shop" / "concepts" / "cart.md", moved)]
    journal.begin(journal.journal_path(db_path), SHOP, pairs, [])  # the SIGKILL came later
    with app_client(data_dir) as client:
        assert "store:concepts/cart.md" in search(client, "zebrafish", "default", "store")
    assert moved.exists() and not journal.journal_path(db_path).exists()
    assert_reindex_changes_nothing(data_dir)


def test_no_operation_lands_between_the_steps_of_a_purge(data_dir: Path) -> None:
    """A purge-project holds the data dir's hygiene lock through all its steps: a rename
    or session move then is refused (409) and changes nothing, and works afterwards."""
    db_path = Config.load(data_dir, {}).db_path
    with app_client(data_dir) as client:
        populate(client)
        with one_at_a_time(db_path, "purge-project"):  # as a purge of shop in its steps
            for op, body in (
                ("rename-project", {"project": "shop", "new_name": "store"}),
                ("move-session", {"session_id": "s-1", "to_project": "billing"}),
            ):
                refused = client.post(f"/admin/hygiene/{op}", json=body)
                assert refused.status_code == 409, refused.text
                assert "purge-project is running" in refused.text
        assert "shop:concepts/cart.md" in search(client, "zebrafish", "default", "shop")
        hygiene(client, "rename-project", workspace="default", project="shop", new_name="store")
    assert_reindex_changes_nothing(data_dir)
