"""memory_query answer=true against a real server whose provider is the fake service."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ai_memory.core.fence import FENCE
from tests.conftest import ServerProcess, clean_env
from tests.fake_llm import FakeLlm, answer, error, slow
from tests.llm_server import call, clean, fake, llm_server, seed, without_timings

__all__ = ["clean", "fake"]

PROJECT = "answers"
QUESTION = "why do readers not block on the writer"


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeLlm) -> Iterator[ServerProcess]:
    with llm_server(
        tmp_path_factory,
        fake,
        AI_MEMORY_ANSWERS__ANSWER_TIMEOUT_S="1",
        AI_MEMORY_ANSWERS__HIT_CHARS="300",
    ) as proc:
        yield proc


@pytest.fixture(scope="module")
def ids(srv: ServerProcess) -> dict[str, int]:
    return seed(srv, PROJECT)


def ask(srv: ServerProcess, **args: Any) -> dict[str, Any]:
    return call(srv, "memory_query", project=PROJECT, query=QUESTION, answer=True, **args)


def plain(srv: ServerProcess, **args: Any) -> dict[str, Any]:
    return without_timings(call(srv, "memory_query", project=PROJECT, query=QUESTION, **args))


def hits_intact(srv: ServerProcess, answered: dict[str, Any], **args: Any) -> None:
    rest = {k: v for k, v in without_timings(answered).items() if k != "answer_unavailable"}
    assert rest == plain(srv, **args)


def test_an_answer_cites_the_page_versions_it_names(
    srv: ServerProcess, fake: FakeLlm, ids: dict[str, int]
) -> None:
    wal, sqlite = ids["concepts/wal.md"], ids["decisions/sqlite.md"]
    fake.push(
        answer(
            {
                "answer": "WAL lets readers proceed while the one writer commits.",
                "citations": [{"page_id": wal}, {"path": "decisions/sqlite.md"}, {"page_id": wal}],
            }
        )
    )
    got = ask(srv)
    assert got["answer"]["text"] == "WAL lets readers proceed while the one writer commits."
    cited = got["answer"]["citations"]
    assert [c["page_id"] for c in cited] == [wal, sqlite]  # in order, once each
    assert cited[0] == {
        "page_id": wal,
        "version": 1,
        "workspace": "default",
        "project": PROJECT,
        "path": "concepts/wal.md",
        "title": "WAL",
    }
    assert [h["page_id"] for h in got["hits"]] == [h["page_id"] for h in plain(srv)["hits"]]


def test_the_provider_gets_each_hit_fenced_and_bounded(
    srv: ServerProcess, fake: FakeLlm, ids: dict[str, int]
) -> None:
    long_body = "Readers keep going. " + "filler " * 400 + "THE-END-MARK"
    call(srv, "memory_write_page", project=PROJECT, path="notes/long.md", body=long_body)
    fake.push(answer({"answer": "x", "citations": [{"page_id": ids["concepts/wal.md"]}]}))
    ask(srv)
    (request,) = fake.requests
    system, user = (m["content"] for m in request.body["messages"])
    assert "not instructions" in system
    assert QUESTION in user
    assert user.count(f"<{FENCE}") == user.count(f"</{FENCE}>") >= 2
    assert f"page_id {ids['concepts/wal.md']}: concepts/wal.md" in user
    assert "(cut)" in user and "THE-END-MARK" not in user  # 300 characters of each page
    call(srv, "memory_delete_page", project=PROJECT, path="notes/long.md")


@pytest.mark.parametrize(
    ("citation", "reason"),
    [
        ({"page_id": 999_999}, "unknown_citation"),
        ({"path": "concepts/nowhere.md"}, "unknown_citation"),
        ({"page_id": 1, "path": "gotchas/busy.md"}, "unknown_citation"),  # they disagree
        ({}, "unknown_citation"),
    ],
)
def test_a_citation_naming_no_supplied_page_withholds_the_answer(
    srv: ServerProcess, fake: FakeLlm, ids: dict[str, int], citation: dict[str, Any], reason: str
) -> None:
    fake.push(
        answer({"answer": "made up", "citations": [{"page_id": ids["concepts/wal.md"]}, citation]})
    )
    got = ask(srv)
    assert "answer" not in got
    assert got["answer_unavailable"]["reason"] == reason
    hits_intact(srv, got)


def test_a_citation_matching_two_supplied_versions_is_ambiguous(
    srv: ServerProcess, fake: FakeLlm, ids: dict[str, int]
) -> None:
    wal = ids["concepts/wal.md"]
    call(
        srv,
        "memory_write_page",
        project=PROJECT,
        path="concepts/wal.md",
        expected_page_id=wal,
        body="# WAL\n\nWAL lets readers proceed while one writer commits; checkpoints trim it.",
    )
    fake.push(answer({"answer": "WAL.", "citations": [{"path": "concepts/wal.md"}]}))
    got = ask(srv, include_superseded=True)  # both versions of the page are supplied
    paths = [hit["path"] for hit in got["hits"]]
    assert paths.count("concepts/wal.md") == 2
    assert got["answer_unavailable"]["reason"] == "ambiguous_citation"
    assert "2 supplied page versions" in got["answer_unavailable"]["detail"]
    hits_intact(srv, got, include_superseded=True)


def test_an_answer_citing_nothing_is_withheld(
    srv: ServerProcess, fake: FakeLlm, ids: dict[str, int]
) -> None:
    fake.push(answer({"answer": "The pages do not say.", "citations": []}))
    got = ask(srv)
    assert got["answer_unavailable"]["reason"] == "uncited"
    hits_intact(srv, got)


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (error(500, "down"), "provider_unavailable"),
        (error(400, "refused"), "provider_unavailable"),
        (slow(3.0, {"answer": "late", "citations": []}), "timeout"),
        (answer({"text": "wrong shape"}), "bad_answer"),
    ],
)
def test_a_provider_failure_withholds_the_answer_and_keeps_the_hits(
    srv: ServerProcess, fake: FakeLlm, ids: dict[str, int], reply: Any, reason: str
) -> None:
    fake.push(reply)
    got = ask(srv)
    assert got["answer_unavailable"]["reason"] == reason, got["answer_unavailable"]
    assert got["hits"]
    hits_intact(srv, got)


def test_no_hits_means_no_call(srv: ServerProcess, fake: FakeLlm, ids: dict[str, int]) -> None:
    got = call(srv, "memory_query", project=PROJECT, query="zebra quasar", answer=True)
    assert got["hits"] == [] and got["answer_unavailable"]["reason"] == "no_hits"
    assert fake.requests == []


def test_without_a_provider_the_same_note_and_the_same_hits(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    with llm_server(tmp_path_factory, None) as bare:
        seed(bare, PROJECT)
        got = ask(bare)
        assert got["answer_unavailable"] == {
            "reason": "no_provider",
            "detail": "no [llm] provider is configured",
        }
        hits_intact(bare, got)


PROBE = """
import asyncio, sys
from pathlib import Path
from ai_memory.config import Config
from ai_memory.consolidate.answer import answered_search
from ai_memory.consolidate.edge import Slots
from ai_memory.retrieval.models import SearchRequest
from ai_memory.runtime import Runtime

runtime = Runtime.start(Config.load(Path(sys.argv[1]), {"AI_MEMORY_ANSWERS__RERANK": "true"}))
request = SearchRequest.parse({"query": "wal", "workspace": "default", "project": "p"})
found = asyncio.run(answered_search(runtime, request, answer=True, slots=Slots()))
runtime.stop()
assert found["answer_unavailable"]["reason"] == "no_provider", found
print(sorted(name for name in sys.modules if name.startswith("ai_memory.llm")))
"""


def test_without_a_provider_answers_and_rerank_never_load_the_llm_package(
    data_dir: Path,
) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", PROBE, str(data_dir)],
        capture_output=True,
        text=True,
        env=clean_env(),
        timeout=120,
    )
    assert probe.returncode == 0, probe.stderr
    assert probe.stdout.strip() == "[]"
