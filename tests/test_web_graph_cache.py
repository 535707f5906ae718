"""The graph (and tree) kept between writes and patched after each is the one read whole.

After every step (pages written with and without links, a link target created
later, a rewrite that drops a link, a title change, a delete and a rewrite of
the deleted page, writes in another project) the patched copy must give exactly
what reading the project afresh gives; a change the audit log does not tie to
single pages makes it read the project whole again.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.store import pages
from ai_memory.web import page_views
from ai_memory.web.graph import graph, select
from ai_memory.web.graph_cache import LINKS_FROM, GraphCache, changed_paths
from ai_memory.web.render_cache import data_version

HERE, ELSEWHERE = Scope.of(None, "here"), Scope.of(None, "there")


def same_as_whole(runtime: Runtime, cache: GraphCache, scope: Scope = HERE) -> None:
    def compare(conn: sqlite3.Connection) -> None:
        for limit in (2, 300):
            assert select(cache.links(conn, scope), scope, limit) == graph(conn, scope, limit)
        kept = cache.links(conn, scope).pages  # the tree is drawn from them too
        rows = ((path, title, kind) for path, (title, kind) in kept.items())
        assert page_views.folders(rows) == page_views.tree(conn, scope)

    runtime.readers.read(compare)


def test_patched_graph_equals_the_graph_read_whole(runtime: Runtime) -> None:
    cache = GraphCache()
    write = runtime.wiki.write_page
    write(HERE.page("concepts/a.md"), "A links [[concepts/b.md]] and [[notes/c.md]].")
    write(HERE.page("concepts/b.md"), "B links [[concepts/a.md]].")
    same_as_whole(runtime, cache)  # read whole: nothing kept yet
    steps: list[Callable[[], object]] = [
        lambda: write(HERE.page("notes/c.md"), "C exists now; links [[concepts/a.md]]."),
        lambda: write(HERE.page("concepts/a.md"), "A now links only [[notes/c.md]]."),
        lambda: write(HERE.page("concepts/b.md"), "B again.", {"title": "Bee"}),
        lambda: write(ELSEWHERE.page("concepts/a.md"), "Elsewhere [[concepts/b.md]]."),
        lambda: runtime.wiki.delete_page(HERE.page("notes/c.md")),
        lambda: write(HERE.page("notes/c.md"), "C back, linking [[concepts/b.md]]."),
        lambda: write(HERE.page("notes/d.md"), "D links itself [[notes/d.md]], [[concepts/b.md]]."),
    ]
    for step in steps:
        step()
        same_as_whole(runtime, cache)
    same_as_whole(runtime, cache, ELSEWHERE)


def test_a_change_not_tied_to_single_pages_reads_the_project_whole(runtime: Runtime) -> None:
    runtime.wiki.write_page(HERE.page("concepts/a.md"), "A.")
    before = runtime.readers.read(data_version)

    def project_wide(conn: sqlite3.Connection) -> None:
        pages.audit(conn, now="2026-01-01T00:00:00Z", actor="test", action="rename", ref=None)

    runtime.writer.call(project_wide)

    def changed(conn: sqlite3.Connection) -> set[str] | None:
        return changed_paths(conn, HERE, before, data_version(conn))

    assert runtime.readers.read(changed) is None
    runtime.wiki.write_page(HERE.page("concepts/b.md"), "B.")
    after_rename = runtime.readers.read(data_version)
    runtime.wiki.write_page(HERE.page("concepts/c.md"), "C.")

    def since(conn: sqlite3.Connection) -> set[str] | None:
        return changed_paths(conn, HERE, after_rename, data_version(conn))

    assert runtime.readers.read(since) == {"concepts/c.md"}


def test_a_page_s_links_are_read_by_their_source_not_the_project_s_targets(
    runtime: Runtime,
) -> None:
    def plan(conn: sqlite3.Connection) -> str:
        rows = conn.execute(f"EXPLAIN QUERY PLAN {LINKS_FROM}", ("w",) * 7).fetchall()
        return " | ".join(str(r[3]) for r in rows)

    found = runtime.readers.read(plan)
    assert "links_src (src_id=?)" in found, found
    assert "links_dst" not in found, found


def test_projects_dropped_beyond_the_page_budget_are_read_whole_again(runtime: Runtime) -> None:
    cache = GraphCache(most_pages=1)  # room for one project's pages only
    for scope in (HERE, ELSEWHERE):
        runtime.wiki.write_page(scope.page("concepts/a.md"), "A [[concepts/b.md]].")
        runtime.wiki.write_page(scope.page("concepts/b.md"), "B [[concepts/a.md]].")
    for scope in (HERE, ELSEWHERE, HERE):
        same_as_whole(runtime, cache, scope)
        runtime.wiki.write_page(scope.page("notes/c.md"), "C [[concepts/a.md]].")
        same_as_whole(runtime, cache, scope)
