"""Search behaviour on a real data dir, in process: ranking, filters, scopes, explain."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_memory.config import Config
from ai_memory.core.errors import InvalidInput
from ai_memory.core.identity import Scope
from ai_memory.maintenance.init import initialise
from ai_memory.retrieval.models import SearchRequest
from ai_memory.retrieval.search import search
from ai_memory.runtime import Runtime

P = Scope.of(None, "alpha")
OTHER = Scope.of(None, "beta")
SHARED = Scope.of(None, "_global")


@pytest.fixture(scope="module")
def rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    root = tmp_path_factory.mktemp("retrieval") / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}))
    write_corpus(runtime)
    try:
        yield runtime
    finally:
        runtime.stop()


def write_corpus(runtime: Runtime) -> None:
    w = runtime.wiki
    w.write_page(
        P.page("concepts/group-commit.md"),
        "# Group commit\n\nThe writer batches queued commands into one transaction.",
    )
    w.write_page(
        P.page("notes/misc.md"),
        "A long note about many things: logging, retries, the release checklist, "
        "and in passing the group commit idea, then more about colours and fonts.",
    )
    w.write_page(
        P.page("decisions/storage-engine.md"),
        "We decided on SQLite with WAL as the storage engine.",
        {"title": "Storage engine", "entities": ["SQLite"]},
    )
    w.write_page(
        P.page("sessions/s1.md"),
        "Long session. We talked about the storage engine for a while, then lunch.",
        {"kind": "session", "title": "Session one"},
    )
    w.write_page(P.page("_slots/current-focus.md"), "Current focus: the vector index rollout.")
    w.write_page(
        P.page("procedures/deploy.md"),
        "Deploy with the blue green switch. See [[gotchas/dns-cache.md]].",
        {"tags": ["ops"], "title": "Deploying"},
    )
    w.write_page(P.page("gotchas/dns-cache.md"), "The resolver caches negative answers.")
    w.write_page(
        P.page("notes/temp.md"),
        "Temporary flag for the canary experiment.",
        {"expires_at": "2000-01-01T00:00:00Z"},
    )
    w.write_page(P.page("notes/cjk.md"), "数据库迁移的问题已经解决了。")
    w.write_page(OTHER.page("notes/secret-plan.md"), "Beta's canary plan for the kumquat launch.")
    w.write_page(SHARED.page("prefs.md"), "Always prefer the kumquat naming scheme.")


def find(runtime: Runtime, query: str, **fields: Any) -> dict[str, Any]:
    fields.setdefault("project", P.project)
    request = SearchRequest.parse({"query": query, **fields})
    result: dict[str, Any] = asyncio.run(search(runtime.retrieval, request)).to_dict()
    return result


def paths(result: dict[str, Any]) -> list[str]:
    return [hit["path"] for hit in result["hits"]]


def test_exact_title_match_outranks_a_passing_mention(rt: Runtime) -> None:
    found = paths(find(rt, "group commit"))
    assert found.index("concepts/group-commit.md") < found.index("notes/misc.md")


def test_a_decision_outranks_a_session_that_only_mentions_it(rt: Runtime) -> None:
    result = find(rt, "which storage engine did we talk about", explain=True)
    found = paths(result)
    assert found[:2] == ["decisions/storage-engine.md", "sessions/s1.md"]
    factors = [h["explain"]["authority"] for h in result["hits"][:2]]
    assert factors[0] > 1.0 > factors[1]


def test_a_pinned_page_is_flagged_and_pin_first_puts_it_first(rt: Runtime) -> None:
    hits = find(rt, "vector index rollout")["hits"]
    slot = next(h for h in hits if h["path"] == "_slots/current-focus.md")
    assert slot["pinned"] is True
    unpinned = [h for h in find(rt, "storage engine")["hits"]]
    assert all("pinned" not in h for h in unpinned)
    hits = find(rt, "storage engine OR rollout", pin_first=True)["hits"]
    assert hits[0]["path"] == "_slots/current-focus.md"


def test_a_superseded_version_never_appears_unless_asked(rt: Runtime) -> None:
    ref = P.page("notes/versioned.md")
    rt.wiki.write_page(ref, "The old answer was pelican.")
    rt.wiki.write_page(ref, "The new answer is flamingo.")
    assert find(rt, "pelican")["hits"] == []
    hits = find(rt, "pelican", include_superseded=True)["hits"]
    assert [(h["path"], h["version"], h.get("superseded")) for h in hits] == [
        ("notes/versioned.md", 1, True)
    ]
    latest = find(rt, "flamingo", include_superseded=True)["hits"]
    assert latest[0]["version"] == 2 and "superseded" not in latest[0]


def test_as_of_searches_the_versions_latest_at_that_time(rt: Runtime) -> None:
    ref = P.page("notes/timeline.md")
    rt.wiki.write_page(ref, "Deployment target is heron.")
    time.sleep(0.01)
    first = rt.wiki.read_page(ref)["created_at"]
    time.sleep(0.01)
    rt.wiki.write_page(ref, "Deployment target is osprey.")
    then = find(rt, "deployment target", as_of=first)["hits"]
    assert [(h["path"], h["version"]) for h in then if h["path"] == ref.path] == [(ref.path, 1)]
    now = find(rt, "deployment target heron osprey")["hits"]
    assert [(h["path"], h["version"]) for h in now if h["path"] == ref.path] == [(ref.path, 2)]


@pytest.mark.parametrize(
    "query",
    [
        '"unbalanced',
        "AND OR NOT",
        "canary NEAR(",
        "nosuchcolumn: canary",
        "(((canary",
        "canary*)",
        "^",
    ],
)
def test_fts_syntax_that_does_not_parse_degrades_to_words(rt: Runtime, query: str) -> None:
    result = find(rt, query, include_expired=True, explain=True)
    if "canary" in query:
        assert "notes/temp.md" in paths(result)


def test_cjk_queries_match_text_without_spaces(rt: Runtime) -> None:
    assert paths(find(rt, "数据库迁移")) == ["notes/cjk.md"]
    assert paths(find(rt, "迁移")) == ["notes/cjk.md"]
    assert find(rt, "猫咪")["hits"] == []


def test_filters_apply_inside_every_stream(rt: Runtime) -> None:
    assert set(paths(find(rt, "storage engine", kind="decision"))) == {
        "decisions/storage-engine.md"
    }
    assert paths(find(rt, "storage engine", kind="session")) == ["sessions/s1.md"]
    assert paths(find(rt, "deploy blue green", tag="ops")) == ["procedures/deploy.md"]
    assert paths(find(rt, "resolver caches", path_prefix="gotchas/")) == ["gotchas/dns-cache.md"]
    assert find(rt, "resolver caches", path_prefix="decisions/")["hits"] == []
    assert paths(find(rt, "storage engine", tier="episodic")) == ["sessions/s1.md"]
    with pytest.raises(InvalidInput, match="kind"):
        find(rt, "x", kind="bogus")


def test_expired_pages_are_hidden_unless_asked(rt: Runtime) -> None:
    assert "notes/temp.md" not in paths(find(rt, "canary experiment"))
    hit = find(rt, "canary experiment", include_expired=True)["hits"][0]
    assert hit["path"] == "notes/temp.md" and hit["expired"] is True


def test_one_project_never_sees_another_unless_it_asks(rt: Runtime) -> None:
    assert "notes/secret-plan.md" not in paths(find(rt, "kumquat launch canary plan"))
    both = find(rt, "kumquat launch", scopes=["alpha", "default/beta"])["hits"]
    assert {(h["project"], h["path"]) for h in both} >= {("beta", "notes/secret-plan.md")}
    everywhere = find(rt, "kumquat", project=None, **{"global": True})
    assert {h["project"] for h in everywhere["hits"]} == {"beta", "_global"}
    assert everywhere["global_hits"] == []


def test_the_global_project_is_listed_separately(rt: Runtime) -> None:
    result = find(rt, "kumquat naming scheme")
    assert [h["path"] for h in result["global_hits"]] == ["prefs.md"]
    assert all(h["project"] == "alpha" for h in result["hits"])
    assert result["scope"]["shared"] == "default/_global"


def test_a_search_needs_a_scope(rt: Runtime) -> None:
    with pytest.raises(InvalidInput, match="project"):
        find(rt, "anything", project=None)


def test_explain_says_why_each_hit_ranks(rt: Runtime) -> None:
    result = find(rt, "SQLite deploy", explain=True)
    decision = next(h for h in result["hits"] if h["path"] == "decisions/storage-engine.md")
    why = decision["explain"]
    assert set(why["streams"]) >= {"fts", "entities"}
    assert why["streams"]["fts"]["rank"] >= 1
    assert why["streams"]["fts"]["contribution"] > 0
    assert why["matched_entities"] == ["sqlite"]
    assert why["authority_parts"]["kind"] > 1.0
    assert 0.55 <= why["authority"] <= 1.5
    linked = next(h for h in result["hits"] if h["path"] == "gotchas/dns-cache.md")
    assert linked["explain"]["edge"] == {
        "from": "procedures/deploy.md",
        "direction": "out",
        "seed_rank": linked["explain"]["edge"]["seed_rank"],
    }
    query = result["explain"]
    assert query["active_streams"][:2] == ["fts", "entities"]
    assert all(s["ms"] >= 0 for s in query["streams"].values())
    assert "explain" not in find(rt, "SQLite")["hits"][0]


def test_hits_carry_identity_snippet_and_score(rt: Runtime) -> None:
    hit = find(rt, "blue green switch")["hits"][0]
    assert hit["path"] == "procedures/deploy.md"
    assert hit["workspace"] == "default" and hit["project"] == "alpha"
    assert hit["title"] == "Deploying" and hit["kind"] == "procedure"
    assert "blue green switch" in hit["snippet"]
    assert hit["page_id"] >= 1 and hit["version"] == 1 and hit["score"] > 0


def test_a_hit_reinforces_its_page_once_a_minute(rt: Runtime) -> None:
    ref = P.page("notes/reinforced.md")
    rt.wiki.write_page(ref, "Marmalade recipe with bitter oranges.")

    def count() -> int:
        return int(
            rt.readers.read(
                lambda c: c.execute(
                    "SELECT access_count FROM pages WHERE path = ? AND is_latest = 1", (ref.path,)
                ).fetchone()[0]
            )
        )

    find(rt, "marmalade")
    deadline = time.monotonic() + 10
    while count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert count() == 1
    find(rt, "marmalade")
    rt.writer.call(lambda c: None)  # anything queued before this has committed
    assert count() == 1


def test_a_full_reindex_keeps_cjk_pages_searchable(tmp_path: Path) -> None:
    from ai_memory.wiki.reindex import reconcile

    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}))
    try:
        runtime.wiki.write_page(P.page("notes/cjk.md"), "数据库迁移的问题已经解决了。")
        report = reconcile(runtime.wiki, full=True)
        assert not report.warnings
        assert paths(find(runtime, "数据库迁移")) == ["notes/cjk.md"]
    finally:
        runtime.stop()


def test_words_in_most_pages_are_dropped_when_others_remain(tmp_path: Path) -> None:
    root = tmp_path / "data"
    initialise(Config.load(root, {}))
    runtime = Runtime.start(Config.load(root, {}))
    try:
        for i in range(60):
            extra = " The quokka migration finished." if i == 7 else ""
            runtime.wiki.write_page(P.page(f"notes/n{i}.md"), f"Widget report number {i}.{extra}")
        result = find(runtime, "widget quokka", explain=True)
        assert result["explain"]["dropped"] == ["widget"]
        assert result["explain"]["fts"] == '"quokka"'
        assert paths(result) == ["notes/n7.md"]
        alone = find(runtime, "widget", explain=True)
        assert alone["explain"]["dropped"] == [] and len(alone["hits"]) == 10
        assert "newest matches first" in alone["explain"]["streams"]["fts"]["note"]
        assert paths(alone)[0] == "notes/n59.md"
    finally:
        runtime.stop()
