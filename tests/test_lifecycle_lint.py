"""Lint finds each planted defect in a test wiki, nothing in a clean one, and clears."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ai_memory.core.clock import iso
from ai_memory.core.identity import Scope
from ai_memory.maintenance.lint import lint_project
from ai_memory.maintenance.sweep import decay_params
from ai_memory.runtime import Runtime
from ai_memory.store.decay import salience
from ai_memory.store.feedback import add_feedback, latest_signals

API = Scope.of(None, "api")
WEB = Scope.of(None, "web")


def clean_wiki(runtime: Runtime) -> None:
    wiki = runtime.wiki
    wiki.write_page(API.page("index.md"), "# Index\n\n[[concepts/a.md]] [[decisions/b.md]]\n")
    wiki.write_page(API.page("concepts/a.md"), "# Alpha\n\nsee [[decisions/b.md]]\n")
    wiki.write_page(API.page("decisions/b.md"), "# Beta\n\nsee [[web:notes/w.md]]\n")
    wiki.write_page(WEB.page("notes/w.md"), "# W\n\ncross-project target\n")


def findings(runtime: Runtime) -> set[tuple[str, str]]:
    report = lint_project(runtime.wiki, runtime.config, API)
    return {(f["rule"], f["path"]) for f in report["findings"]}


def feedback(runtime: Runtime, path: str, signal: str) -> None:
    ref = API.page(path)
    page_id = runtime.wiki.read_page(ref)["page_id"]
    now = iso(datetime.now(UTC))
    runtime.writer.call(lambda conn: add_feedback(conn, ref, page_id, signal, "moved", now))


def test_a_clean_wiki_has_no_findings_and_the_report_is_a_lint_page(runtime: Runtime) -> None:
    clean_wiki(runtime)
    assert findings(runtime) == set()
    report = runtime.wiki.read_page(API.page("_lint/report.md"))
    assert report["kind"] == "lint" and report["tier"] == "working"
    assert "Nothing to fix." in report["body"]


def test_each_planted_defect_is_found_and_clears_when_fixed(runtime: Runtime) -> None:
    clean_wiki(runtime)
    wiki = runtime.wiki
    past = iso(datetime.now(UTC) - timedelta(days=1))
    wiki.write_page(
        API.page("concepts/a.md"), "# Alpha\n\n[[decisions/b.md]] [[gotchas/none.md]]\n"
    )
    wiki.write_page(API.page("decisions/b.md"), "# Beta\n\nsee [[web:notes/gone.md]]\n")
    wiki.write_page(API.page("notes/lonely.md"), "# Lonely\n\nnobody links here\n")
    wiki.write_page(API.page("notes/twin.md"), "# Alpha\n\n[[notes/lonely.md]]\n")
    wiki.write_page(API.page("notes/exp.md"), "# Exp\n\ntemporary\n", {"expires_at": past})
    wiki.write_page(
        API.page("index.md"),
        "# Index\n\n[[concepts/a.md]] [[decisions/b.md]] [[notes/twin.md]] [[notes/exp.md]]\n",
    )
    broken = wiki.file_path(API.page("notes/broken.md"))
    runtime.wiki.write_page(API.page("notes/broken.md"), "# Broken\n\n[[index.md]]\n")
    feedback(runtime, "concepts/a.md", "stale")
    found = findings(runtime)
    assert ("dangling-link", "concepts/a.md") in found  # local
    assert ("dangling-link", "decisions/b.md") in found  # cross-project
    assert ("orphan", "notes/broken.md") in found
    assert ("duplicate-title", "notes/twin.md") in found
    assert ("duplicate-title", "concepts/a.md") in found
    assert ("expired-linked", "index.md") in found
    assert ("flagged-stale", "concepts/a.md") in found
    report = wiki.read_page(API.page("_lint/report.md"))["body"]
    assert "`gotchas/none.md`" in report and "Fix:" in report
    assert "[[" not in report  # the report names pages, it does not link them

    # Fix everything: the rewrite clears the stale flag, and each rule goes quiet.
    wiki.write_page(API.page("concepts/a.md"), "# Alpha\n\n[[decisions/b.md]]\n")
    wiki.write_page(API.page("decisions/b.md"), "# Beta\n\nsee [[web:notes/w.md]]\n")
    wiki.write_page(API.page("notes/twin.md"), "[[notes/lonely.md]]\n", {"title": "Twin"})
    wiki.write_page(
        API.page("index.md"),
        "# Index\n\n[[concepts/a.md]] [[decisions/b.md]] [[notes/twin.md]] [[notes/broken.md]]\n",
    )
    wiki.delete_page(API.page("notes/exp.md"))
    assert broken.exists()
    assert findings(runtime) == set()


def test_broken_frontmatter_is_found(runtime: Runtime) -> None:
    clean_wiki(runtime)
    path = runtime.wiki.file_path(API.page("notes/bad.md"))
    runtime.wiki.write_page(
        API.page("index.md"), "# Index\n\n[[concepts/a.md]] [[decisions/b.md]] [[notes/bad.md]]\n"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("---\ntitle: [unclosed\n---\nbody\n")
    from ai_memory.wiki.reindex import reconcile

    reconcile(runtime.wiki)
    assert ("broken-frontmatter", "notes/bad.md") in findings(runtime)


def test_a_rewrite_clears_stale_and_helpful_moves_salience_within_its_clamp(
    runtime: Runtime,
) -> None:
    clean_wiki(runtime)
    params = decay_params(runtime.config)
    ref = API.page("concepts/a.md")
    for _ in range(20):
        feedback(runtime, "concepts/a.md", "helpful")
    signals = runtime.readers.read(lambda conn: latest_signals(conn, ref))
    assert salience(signals, params) == params.salience_max
    feedback(runtime, "concepts/a.md", "wrong")
    signals = runtime.readers.read(lambda conn: latest_signals(conn, ref))
    assert salience(signals, params) == 0.0
    runtime.wiki.write_page(ref, "# Alpha\n\ncorrected, see [[decisions/b.md]]\n")
    assert runtime.readers.read(lambda conn: latest_signals(conn, ref)) == []
    assert ("flagged-wrong", "concepts/a.md") not in findings(runtime)


def test_dormant_near_duplicates_are_an_advisory_finding(runtime: Runtime) -> None:
    import numpy as np

    vec = Scope.of(None, "vec")
    wiki = runtime.wiki
    wiki.write_page(vec.page("index.md"), "[[concepts/x.md]] [[concepts/y.md]] [[concepts/z.md]]")
    directions = {"x": [1.0, 0.0, 0.0], "y": [0.95, 0.31, 0.0], "z": [0.0, 0.0, 1.0]}
    ids = {}
    for name in directions:
        ids[name] = wiki.write_page(vec.page(f"concepts/{name}.md"), f"# {name}\n").page_id

    def store(conn: object) -> None:
        for name, direction in directions.items():
            v = np.array(direction, dtype=np.float32)
            blob = (v / np.linalg.norm(v)).astype(np.float16).tobytes()
            conn.execute(  # type: ignore[attr-defined]
                "INSERT INTO page_vectors (page_id, workspace, project, chunk, provider, model, "
                "dim, vector, created_at) VALUES (?, 'default', 'vec', 0, 'local', 'm', 3, ?, "
                "'2026-01-01T00:00:00Z')",
                (ids[name], blob),
            )

    runtime.writer.call(store)
    now = datetime.now(UTC)
    fresh = lint_project(wiki, runtime.config, vec)
    assert not [f for f in fresh["findings"] if f["rule"] == "similar"]  # in use: no advice
    later = lint_project(wiki, runtime.config, vec, clock=lambda: iso(now + timedelta(days=400)))
    similar = [(f["path"], f["message"]) for f in later["findings"] if f["rule"] == "similar"]
    assert len(similar) == 1 and similar[0][0] == "concepts/x.md"
    assert "`concepts/y.md`" in similar[0][1]


def test_a_session_page_about_to_be_evicted_is_a_finding(runtime: Runtime) -> None:
    clean_wiki(runtime)
    runtime.wiki.write_page(API.page("sessions/s-9.md"), "# Session s-9\n\nwhat happened\n")
    now = datetime.now(UTC)
    assert ("cold", "sessions/s-9.md") not in findings(runtime)
    later = lint_project(
        runtime.wiki, runtime.config, API, clock=lambda: iso(now + timedelta(days=90))
    )
    cold = [f for f in later["findings"] if f["rule"] == "cold"]
    assert [f["path"] for f in cold] == ["sessions/s-9.md"] and "restore-page" in cold[0]["fix"]
