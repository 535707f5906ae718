"""A project with more durable pages than the prompt lists: a page past that listing
is still sent when search finds it related, and a consolidation that updates or links
it sees it as the page it is (an update, a link), rather than failing the whole run by
trying to create it again."""

from __future__ import annotations

from pathlib import Path

from ai_memory.consolidate.consolidation_reads import MAX_LISTED
from ai_memory.core.identity import Scope
from ai_memory.runtime import Runtime
from ai_memory.wiki.batch import PageWrite, write_batch
from tests.consolidate_support import PAGES, PROJECT, session_items
from tests.fake_llm import FakeLlm, answer
from tests.hooks_support import app_client

LAST = "procedures/zz-release.md"  # past the listing, in path order
SHOP = Scope.of("default", "shop")


def test_a_page_past_the_listing_is_updated_and_linked(data_dir: Path) -> None:
    with FakeLlm() as fake:
        settings = {
            "llm__provider": "openai-compat",
            "llm__model": "fake-model",
            "llm__base_url": fake.openai_url,
        }
        with app_client(data_dir, **settings) as client:
            runtime: Runtime = client.app.state.runtime  # type: ignore[attr-defined]
            many = [
                PageWrite(SHOP.page(f"concepts/c{i:03d}.md"), f"# C{i}\n\nConcept {i}.\n")
                for i in range(MAX_LISTED)
            ]
            release = "# Release\n\n1. Tag.\n\nIf checkout says database is locked, stop.\n"
            many.append(PageWrite(SHOP.page(LAST), release))
            write_batch(runtime.wiki, many, lambda conn, results: len(results))
            client.post("/hook/batch", json=session_items("big-1"))
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
            fake.push(
                answer(
                    {
                        "title": "Release steps",
                        "summary": "Added a step to the release.",
                        "pages": [
                            {
                                "folder": "procedures",
                                "slug": "zz-release",
                                "title": "Release",
                                "body": "1. Tag.\n2. Push the tag.",
                            },
                            {
                                "folder": "gotchas",
                                "slug": "tag-first",
                                "title": "Tag first",
                                "body": "Tag before pushing.",
                                "links": [LAST],
                            },
                        ],
                    }
                )
            )
            sent = fake.requests  # filled as the provider is asked
            done = client.post("/api/v1/consolidate", json={**PROJECT, "session_id": "big-1"})
            assert done.status_code == 200, done.text
            (user,) = [m["content"] for m in sent[0].body["messages"] if m["role"] == "user"]
            assert f"## {LAST} — Release" in user  # found by search, sent as related
            actions = {p["path"]: p["action"] for p in done.json()["pages"]}
            assert actions == {LAST: "update", "gotchas/tag-first.md": "create"}
            release = client.get(f"{PAGES}/{LAST}").json()
            assert release["version"] == 2 and "Push the tag" in release["body"]
            gotcha = client.get(f"{PAGES}/gotchas/tag-first.md").json()
            assert f"[[{LAST}]]" in gotcha["body"]
