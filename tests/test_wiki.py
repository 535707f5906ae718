from __future__ import annotations

import sqlite3
from pathlib import Path

import pygit2
import pytest

from ai_memory.core.errors import InvalidFrontmatter, NotFound, PreconditionFailed, TooLarge
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.wiki.reindex import reconcile

API = Scope.of(None, "api")


def fts_paths(runtime: Runtime, query: str) -> list[str]:
    sql = (
        "SELECT p.path FROM pages_fts f JOIN pages p ON p.id = f.rowid "
        "WHERE pages_fts MATCH ? ORDER BY p.path"
    )
    return runtime.readers.read(lambda conn: [r[0] for r in conn.execute(sql, (query,))])


def test_write_lands_as_file_index_row_and_fts(runtime: Runtime) -> None:
    ref = API.page("decisions/db.md")
    result = runtime.wiki.write_page(
        ref, "# Use SQLite\n\nWAL mode, one writer.\n", {"tags": ["db"], "entities": ["SQLite"]}
    )
    assert result.created and result.changed and result.version == 1
    text = runtime.wiki.file_path(ref).read_text()
    assert text.startswith("---\ntitle: Use SQLite\nkind: decision\n")
    assert "WAL mode, one writer." in text
    page = runtime.wiki.read_page(ref)
    assert page["page_id"] == result.page_id and page["is_latest"]
    assert page["tags"] == ["db"] and page["kind"] == "decision" and page["tier"] == "semantic"
    assert fts_paths(runtime, "writer") == ["decisions/db.md"]


def test_rewrite_supersedes_and_keeps_history_and_unknown_keys(runtime: Runtime) -> None:
    ref = API.page("concepts/wal.md")
    first = runtime.wiki.write_page(ref, "---\ncustom: keep me\n---\nold words\n")
    second = runtime.wiki.write_page(ref, "new words\n", {"summary": "s"})
    assert second.version == 2
    page = runtime.wiki.read_page(ref)
    assert page["frontmatter"]["custom"] == "keep me"
    assert page["supersedes"] == first.page_id
    assert runtime.wiki.read_page(ref, version=1)["body"] == "old words\n"
    assert [v["version"] for v in runtime.wiki.history(ref)] == [2, 1]
    assert fts_paths(runtime, "old") == [] and fts_paths(runtime, "new") == ["concepts/wal.md"]
    again = runtime.wiki.write_page(ref, "new words\n", {"summary": "s"})
    assert not again.changed and again.page_id == second.page_id


def test_preconditions_write_nothing(runtime: Runtime) -> None:
    ref = API.page("notes/x.md")
    first = runtime.wiki.write_page(ref, "one", create_only=True)
    with pytest.raises(PreconditionFailed) as info:
        runtime.wiki.write_page(ref, "two", create_only=True)
    assert info.value.current_page_id == first.page_id
    second = runtime.wiki.write_page(ref, "two", expected_page_id=first.page_id)
    with pytest.raises(PreconditionFailed) as stale:
        runtime.wiki.write_page(ref, "three", expected_page_id=first.page_id)
    assert stale.value.current_page_id == second.page_id
    assert runtime.wiki.read_page(ref)["body"] == "two"
    assert "two" in runtime.wiki.file_path(ref).read_text()


def test_links_resolve_when_the_target_lands(runtime: Runtime) -> None:
    source = API.page("decisions/db.md")
    runtime.wiki.write_page(source, "see [[concepts/wal.md]] and [[web:index.md]]")
    links = {link["path"]: link["resolved"] for link in runtime.wiki.read_page(source)["links"]}
    assert links == {"concepts/wal.md": False, "index.md": False}
    runtime.wiki.write_page(API.page("concepts/wal.md"), "WAL")
    runtime.wiki.write_page(Scope.of(None, "web").page("index.md"), "web")
    links = {link["path"]: link["resolved"] for link in runtime.wiki.read_page(source)["links"]}
    assert links == {"concepts/wal.md": True, "index.md": True}
    backlinks = runtime.wiki.read_page(API.page("concepts/wal.md"))["backlinks"]
    assert backlinks == [{"workspace": "default", "project": "api", "path": "decisions/db.md"}]


def test_delete_removes_file_and_search_but_keeps_history(runtime: Runtime) -> None:
    ref = API.page("gotchas/lock.md")
    written = runtime.wiki.write_page(ref, "database is locked")
    with pytest.raises(PreconditionFailed):
        runtime.wiki.delete_page(ref, expected_page_id=written.page_id + 100)
    assert runtime.wiki.delete_page(ref) == written.page_id
    assert not runtime.wiki.file_path(ref).exists()
    assert fts_paths(runtime, "locked") == []
    with pytest.raises(NotFound):
        runtime.wiki.read_page(ref)
    assert runtime.wiki.history(ref)[0]["deleted_at"] is not None
    recreated = runtime.wiki.write_page(ref, "back", create_only=True)
    assert recreated.version == 2


def test_bad_input_is_refused_before_anything_changes(runtime: Runtime) -> None:
    ref = API.page("notes/keep.md")
    runtime.wiki.write_page(ref, "keep")
    with pytest.raises(InvalidFrontmatter):
        runtime.wiki.write_page(ref, "---\ntitle: [oops\n---\nbody")
    with pytest.raises(TooLarge):
        runtime.wiki.write_page(ref, "x" * (runtime.wiki.max_page_bytes + 1))
    assert runtime.wiki.read_page(ref)["body"] == "keep"
    assert len(runtime.wiki.history(ref)) == 1


def test_checkpoint_commits_every_write(runtime: Runtime) -> None:
    for i in range(5):
        runtime.wiki.write_page(API.page(f"notes/{i}.md"), f"note {i}")
    runtime.checkpointer.flush()
    repo = pygit2.Repository(str(runtime.config.wiki_dir))
    tree = repo.head.peel(pygit2.Commit).tree
    committed = {f"notes/{i}.md" for i in range(5) if (tree / "default" / "api" / f"notes/{i}.md")}
    assert len(committed) == 5
    assert not [p for p in repo.status() if not p.startswith(".")]


def test_hand_edits_and_broken_yaml_on_disk_are_indexed(runtime: Runtime) -> None:
    root = runtime.config.wiki_dir / "default" / "api"
    (root / "concepts").mkdir(parents=True)
    (root / "concepts" / "hand.md").write_text("# Hand written\n\nzebra crossing\n")
    (root / "concepts" / "broken.md").write_text("---\ntitle: [oops\n---\nquokka facts\n")
    report = reconcile(runtime.wiki)
    assert report.added == 2
    assert any("broken.md" in w and "YAML" in w for w in report.warnings)
    broken = runtime.wiki.read_page(API.page("concepts/broken.md"))
    assert broken["frontmatter_error"] and "quokka" in broken["body"]
    assert fts_paths(runtime, "quokka") == ["concepts/broken.md"]
    assert fts_paths(runtime, "zebra") == ["concepts/hand.md"]
    assert reconcile(runtime.wiki).changed == 0


def snapshot(db: Path) -> tuple[object, ...]:
    conn = sqlite3.connect(db)
    try:
        latest = conn.execute(
            "SELECT id, workspace, project, path, content_hash FROM pages WHERE is_latest = 1 "
            "ORDER BY id"
        ).fetchall()
        links = conn.execute(
            "SELECT src_id, dst_workspace, dst_project, dst_path FROM links ORDER BY 1, 2, 3, 4"
        ).fetchall()
        entities = conn.execute("SELECT page_id, norm FROM entities ORDER BY 1, 2").fetchall()
        searches = [
            conn.execute(
                "SELECT rowid FROM pages_fts WHERE pages_fts MATCH ? ORDER BY rank, rowid", (q,)
            ).fetchall()
            for q in ("alpha", "topic7", "body OR words", "link*")
        ]
        return (latest, links, entities, searches)
    finally:
        conn.close()


def test_reindex_of_1000_pages_reproduces_pages_links_and_search(data_dir: Path) -> None:
    from ai_memory.config import Config

    config = Config.load(data_dir, {})
    runtime = Runtime.start(config)
    try:
        for i in range(1000):
            runtime.wiki.write_page(
                API.page(f"notes/n{i}.md"),
                f"# Note {i}\n\nalpha body words topic{i % 10} see [[notes/n{(i + 1) % 1000}.md]]",
                {"entities": [f"Entity {i % 7}"]},
            )
    finally:
        runtime.stop()
    before = snapshot(config.db_path)
    runtime = Runtime.start(config, reconcile_wiki=False)
    try:
        report = reconcile(runtime.wiki, full=True)
    finally:
        runtime.stop()
    assert report.files == 1000 and report.unchanged == 1000 and report.changed == 0
    assert snapshot(config.db_path) == before


def test_an_interrupted_reindex_is_finished_at_the_next_start(data_dir: Path) -> None:
    from ai_memory.config import Config
    from ai_memory.store import pages

    config = Config.load(data_dir, {})
    runtime = Runtime.start(config)
    try:
        runtime.wiki.write_page(API.page("notes/a.md"), "aardvark [[notes/b.md]]")
        runtime.wiki.write_page(API.page("notes/b.md"), "badger")
        # A reindex that died after clearing the derived rows.
        runtime.reindex_marker.touch()
        runtime.writer.call(pages.clear_derived)
    finally:
        runtime.stop()
    leftover = config.wiki_dir / "default/api/notes/.tmp-a.md.dead"
    leftover.write_text("half a write")
    runtime = Runtime.start(config)
    try:
        assert fts_paths(runtime, "aardvark") == ["notes/a.md"]
        assert runtime.wiki.read_page(API.page("notes/a.md"))["links"][0]["resolved"] is True
        assert not runtime.reindex_marker.exists()
    finally:
        runtime.stop()
    assert not leftover.exists()


def test_a_write_keeps_an_unindexed_hand_edit_in_history(runtime: Runtime) -> None:
    ref = API.page("concepts/edited.md")
    first = runtime.wiki.write_page(ref, "original text")
    file = runtime.wiki.file_path(ref)
    file.write_text(file.read_text().replace("original text", "edited by hand"))
    with pytest.raises(PreconditionFailed):
        runtime.wiki.write_page(ref, "agent text", expected_page_id=first.page_id)
    runtime.wiki.write_page(ref, "agent text")
    history = runtime.wiki.history(ref)
    assert [v["actor"] for v in history] == ["api", "disk", "api"]
    assert "edited by hand" in runtime.wiki.read_page(ref, version=2)["body"]
    assert "agent text" in file.read_text()


def test_rewriting_identical_content_restores_a_deleted_file(runtime: Runtime) -> None:
    ref = API.page("concepts/restored.md")
    runtime.wiki.write_page(ref, "same")
    runtime.wiki.file_path(ref).unlink()
    result = runtime.wiki.write_page(ref, "same")
    assert result.changed and runtime.wiki.file_path(ref).read_text().endswith("same")


def vocabulary(conn: sqlite3.Connection) -> list[object]:
    """Per-term counts, plus the row and token totals BM25 normalises by (record 1)."""
    terms = conn.execute("SELECT term, doc, cnt FROM pages_fts_vocab ORDER BY term").fetchall()
    totals = conn.execute("SELECT block FROM pages_fts_data WHERE id = 1").fetchone()
    return [*terms, totals]


def expected_vocabulary(db: Path) -> list[object]:
    """Term counts of a fresh index over exactly the latest pages."""
    from ai_memory.core.text import fts_text
    from ai_memory.store.migrations import PAGE_TOKENIZER

    source = sqlite3.connect(db)
    rows = source.execute("SELECT id, title, body FROM pages WHERE is_latest = 1").fetchall()
    source.close()
    fresh = sqlite3.connect(":memory:")
    fresh.execute(
        f"CREATE VIRTUAL TABLE pages_fts USING fts5(title, body, content='', "
        f'tokenize="{PAGE_TOKENIZER}")'
    )
    fresh.execute("CREATE VIRTUAL TABLE pages_fts_vocab USING fts5vocab(pages_fts, 'row')")
    fresh.executemany(
        "INSERT INTO pages_fts(rowid, title, body) VALUES (?, ?, ?)",
        [(i, fts_text(t), fts_text(b)) for i, t, b in rows],
    )
    return vocabulary(fresh)


def test_index_term_counts_stay_exact_through_rewrites_deletes_and_reindex(
    data_dir: Path,
) -> None:
    from ai_memory.config import Config

    config = Config.load(data_dir, {})
    runtime = Runtime.start(config)
    try:
        for i in range(30):
            runtime.wiki.write_page(API.page(f"notes/{i}.md"), f"alpha beta{i % 3} gamma.")
        for i in range(0, 30, 3):
            runtime.wiki.write_page(API.page(f"notes/{i}.md"), f"rewritten delta{i}")
        for i in range(1, 30, 5):
            runtime.wiki.delete_page(API.page(f"notes/{i}.md"))
        root = config.wiki_dir / "default/api/notes"
        (root / "2.md").write_text("changed on disk epsilon")
        (root / "4.md").unlink()
        runtime.reindex()
        conn = sqlite3.connect(config.db_path)
        assert vocabulary(conn) == expected_vocabulary(config.db_path)
        conn.close()
        assert fts_paths(runtime, "epsilon") == ["notes/2.md"]
        assert fts_paths(runtime, "alpha") == sorted(
            f"notes/{i}.md" for i in range(30) if i % 3 and (i - 1) % 5 and i not in (2, 4)
        )
    finally:
        runtime.stop()
