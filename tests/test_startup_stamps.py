"""The start-up check reads only files whose size or modification time moved."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ai_memory.config import Config
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.wiki.reindex import ReconcileReport, reconcile, survey

API = Scope.of(None, "api")
HOUR_NS = 3600 * 10**9


@contextmanager
def started(data_dir: Path) -> Iterator[Runtime]:
    runtime = Runtime.start(Config.load(data_dir, {}))
    try:
        yield runtime
    finally:
        runtime.stop()


def page_file(data_dir: Path, name: str) -> Path:
    return data_dir / "wiki" / "default" / "api" / name


def age(file: Path, by_ns: int = HOUR_NS) -> None:
    """Make ``file`` look written a while ago (settled past any timestamp tick)."""
    then = time.time_ns() - by_ns
    os.utime(file, ns=(then, then))


def stamps(runtime: Runtime) -> dict[str, tuple[int, int]]:
    rows = runtime.readers.read(
        lambda c: c.execute("SELECT path, size, mtime_ns FROM file_stamps").fetchall()
    )
    return {str(r[0]): (int(r[1]), int(r[2])) for r in rows}


def body_of(runtime: Runtime, path: str) -> str:
    return str(runtime.wiki.read_page(API.page(path))["body"])


def test_settled_files_are_stamped_and_recent_ones_are_not(data_dir: Path) -> None:
    with started(data_dir) as runtime:
        runtime.wiki.write_page(API.page("a.md"), "# A\n\nalpha\n", {})
        runtime.wiki.write_page(API.page("b.md"), "# B\n\nbeta\n", {})
        age(page_file(data_dir, "a.md"))
        report = reconcile(runtime.wiki)
        assert report.unchanged == 2 and report.changed == 0
        # b.md was written a moment ago: an edit in the same tick could keep its stamp.
        assert set(stamps(runtime)) == {"a.md"}
        assert reconcile(runtime.wiki).unchanged == 2


def test_an_edit_that_moves_the_stamp_is_indexed_at_start(data_dir: Path) -> None:
    file = page_file(data_dir, "a.md")
    with started(data_dir) as runtime:
        runtime.wiki.write_page(API.page("a.md"), "# A\n\nalpha one\n", {})
        age(file)
        reconcile(runtime.wiki)
        assert "a.md" in stamps(runtime)
    # Edited while the server is down: same size, a later mtime (still settled).
    text = file.read_text(encoding="utf-8")
    file.write_text(text.replace("alpha one", "omega two"), encoding="utf-8")
    age(file, HOUR_NS // 2)
    with started(data_dir) as runtime:
        assert runtime.startup_report is not None and runtime.startup_report.updated == 1
        assert "omega two" in body_of(runtime, "a.md")
        assert stamps(runtime)["a.md"][1] == file.stat().st_mtime_ns


def test_a_server_write_after_the_stamp_is_not_taken_for_the_stamped_file(
    data_dir: Path,
) -> None:
    """A stamp names the hash it was read with; the index moving on voids it."""
    file = page_file(data_dir, "a.md")
    with started(data_dir) as runtime:
        runtime.wiki.write_page(API.page("a.md"), "# A\n\nfirst\n", {})
        age(file)
        reconcile(runtime.wiki)
        runtime.wiki.write_page(API.page("a.md"), "# A\n\nsecond, longer\n", {})
        age(file)
    with started(data_dir) as runtime:
        assert runtime.startup_report is not None and runtime.startup_report.changed == 0
        assert "second, longer" in body_of(runtime, "a.md")
        assert stamps(runtime)["a.md"] == (file.stat().st_size, file.stat().st_mtime_ns)


def test_a_deleted_file_is_dropped_even_with_a_stamp(data_dir: Path) -> None:
    file = page_file(data_dir, "a.md")
    with started(data_dir) as runtime:
        runtime.wiki.write_page(API.page("a.md"), "# A\n\nalpha\n", {})
        age(file)
        reconcile(runtime.wiki)
    file.unlink()
    with started(data_dir) as runtime:
        assert runtime.startup_report is not None and runtime.startup_report.deleted == 1


def test_only_the_pages_whose_files_are_gone_are_dropped(data_dir: Path) -> None:
    other = Scope.of(None, "web")
    with started(data_dir) as runtime:
        for scope in (API, other):
            for name in ("a.md", "b.md"):
                runtime.wiki.write_page(scope.page(name), f"# {name}\n\nkept\n", {})
    page_file(data_dir, "a.md").unlink()
    (data_dir / "wiki" / "default" / "web" / "b.md").unlink()
    with started(data_dir) as runtime:
        report = runtime.startup_report
        assert report is not None and (report.deleted, report.unchanged) == (2, 2)
        assert sorted(report.changed_paths) == ["default/api/a.md", "default/web/b.md"]
        left = runtime.readers.read(
            lambda conn: sorted(
                f"{row[0]}/{row[1]}"
                for row in conn.execute("SELECT project, path FROM pages WHERE is_latest = 1")
            )
        )
        assert left == ["api/b.md", "web/a.md"]
    with started(data_dir) as runtime:  # nothing left to drop
        assert runtime.startup_report is not None and runtime.startup_report.changed == 0


def test_the_survey_reads_only_what_its_stamp_does_not_vouch_for(tmp_path: Path) -> None:
    root = tmp_path / "wiki"
    for name in ("stamped.md", "unstamped.md", "new.md", "recent.md"):
        (root / "default" / "api" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "default" / "api" / name).write_text(f"# {name}\n")
    (root / "loose.md").write_text("not inside <workspace>/<project>/\n")
    (root / ".git" / "x.md").parent.mkdir()
    (root / ".git" / "x.md").write_text("a dot-folder's file is no page\n")
    for name in ("stamped.md", "unstamped.md", "new.md"):
        age(root / "default" / "api" / name)
    stamped = root / "default" / "api" / "stamped.md"
    key = ("default", "api", "stamped.md")
    known = {
        key: "h1",
        ("default", "api", "unstamped.md"): "h2",
        ("default", "api", "recent.md"): "h3",
    }
    stamps = {key: (stamped.stat().st_size, stamped.stat().st_mtime_ns)}
    report = ReconcileReport()
    keys, stats, to_read = survey(str(root), report, known, stamps)
    assert [k[2] for k in keys] == ["new.md", "recent.md", "stamped.md", "unstamped.md"]
    assert [ref.path for ref in to_read] == ["new.md", "recent.md", "unstamped.md"]
    assert sorted(k[2] for k in stats) == ["new.md", "stamped.md", "unstamped.md"]  # settled
    assert len(report.warnings) == 1 and "loose.md" in report.warnings[0]
