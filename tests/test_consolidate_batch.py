"""Several page writes as one unit: all land with one checkpoint, or none does."""

from __future__ import annotations

import sqlite3

import pygit2
import pytest

from ai_memory.core.errors import PreconditionFailed
from ai_memory.core.identity import Scope
from ai_memory.core.page import WriteResult
from ai_memory.runtime import Runtime
from ai_memory.wiki.batch import PageWrite, write_batch

SCOPE = Scope("default", "batch")


def _count(conn: sqlite3.Connection, results: list[WriteResult]) -> int:
    return len(results)


def test_a_batch_lands_every_page_and_one_checkpoint(runtime: Runtime) -> None:
    writes = [
        PageWrite(SCOPE.page("concepts/a.md"), "# A\n\nSee [[concepts/b.md]].\n"),
        PageWrite(SCOPE.page("concepts/b.md"), "# B\n\nSee [[concepts/a.md]].\n"),
    ]
    done = write_batch(runtime.wiki, writes, _count)
    assert done.also == 2 and all(r.created for r in done.results)
    runtime.checkpointer.flush()
    repo = pygit2.Repository(str(runtime.config.wiki_dir))
    head = repo.head.peel(pygit2.Commit)
    changed = {d.delta.new_file.path for d in repo.diff(head.parents[0], head)}
    assert changed == {"default/batch/concepts/a.md", "default/batch/concepts/b.md"}
    page = runtime.wiki.read_page(SCOPE.page("concepts/a.md"))
    assert [link["resolved"] for link in page["links"]] == [True]


def test_one_failing_page_undoes_the_whole_batch(runtime: Runtime) -> None:
    runtime.wiki.write_page(SCOPE.page("concepts/taken.md"), "# Taken\n")
    writes = [
        PageWrite(SCOPE.page("concepts/new.md"), "# New\n"),
        PageWrite(SCOPE.page("concepts/taken.md"), "# Again\n", create_only=True),
    ]
    with pytest.raises(PreconditionFailed):
        write_batch(runtime.wiki, writes, _count)
    assert not (runtime.config.wiki_dir / "default/batch/concepts/new.md").exists()
    assert runtime.wiki.read_page(SCOPE.page("concepts/taken.md"))["version"] == 1
