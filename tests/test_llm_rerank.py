"""[answers] rerank = true: the provider reorders the fused top hits, or the local order stands."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from ai_memory.core.fence import FENCE
from tests.conftest import ServerProcess
from tests.fake_llm import FakeLlm, answer, error, slow
from tests.llm_server import call, clean, fake, llm_server, seed
from tests.mcp_support import connect

__all__ = ["clean", "fake"]

PROJECT = "rerank"
QUERY = "readers writer sqlite"
RERANK = {"AI_MEMORY_ANSWERS__RERANK": "true", "AI_MEMORY_ANSWERS__RERANK_TIMEOUT_S": "1"}


@pytest.fixture(scope="module")
def srv(tmp_path_factory: pytest.TempPathFactory, fake: FakeLlm) -> Iterator[ServerProcess]:
    with llm_server(tmp_path_factory, fake, **RERANK) as proc:
        seed(proc, PROJECT)
        for n in range(34):
            body = f"Note {n} about readers and the writer queue."
            call(proc, "memory_write_page", project="many", path=f"notes/n{n:02}.md", body=body)
        yield proc


def query(srv: ServerProcess, **args: Any) -> dict[str, Any]:
    return call(srv, "memory_query", **{"project": PROJECT, "query": QUERY, **args})


def ids(found: dict[str, Any]) -> list[int]:
    return [hit["page_id"] for hit in found["hits"]]


def local_order(srv: ServerProcess, fake: FakeLlm, **args: Any) -> list[int]:
    fake.push(error(400, "refused"))  # not transient: no breaker counts it
    found = query(srv, **{"explain": True, **args})
    assert found["explain"]["rerank"]["order"] == "local"
    return ids(found)


def test_the_provider_order_is_used_and_shown_in_explain(srv: ServerProcess, fake: FakeLlm) -> None:
    local = local_order(srv, fake)
    assert len(local) == 3
    fake.push(answer({"order": local[::-1]}))
    found = query(srv, explain=True)
    assert ids(found) == local[::-1]
    rerank = found["explain"]["rerank"]
    assert rerank["order"] == "provider" and rerank["reason"] == "reranked"
    assert rerank["candidates"] == 3 and rerank["moved"] == 2
    system, user = (m["content"] for m in fake.requests[-1].body["messages"])
    assert "not instructions" in system and QUERY in user
    assert user.count(f"<{FENCE}>") == 1 and f"page_id {local[0]}: " in user


def test_hits_left_out_follow_in_their_local_order(srv: ServerProcess, fake: FakeLlm) -> None:
    local = local_order(srv, fake)
    fake.push(answer({"order": [local[2]]}))
    assert ids(query(srv)) == [local[2], local[0], local[1]]


def test_without_explain_the_answer_has_no_explain(srv: ServerProcess, fake: FakeLlm) -> None:
    local = local_order(srv, fake)
    fake.push(answer({"order": local[::-1]}))
    found = query(srv)
    assert ids(found) == local[::-1] and "explain" not in found


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (slow(3.0, {"order": []}), "timeout"),
        (error(503, "down"), "provider_unavailable"),
        (answer({"order": [999_999]}), "bad_answer"),
        (answer({"ranking": []}), "bad_answer"),
    ],
)
def test_any_failure_keeps_the_local_order(
    srv: ServerProcess, fake: FakeLlm, reply: Any, reason: str
) -> None:
    local = local_order(srv, fake)
    fake.push(reply)
    found = query(srv, explain=True)
    assert ids(found) == local
    assert found["explain"]["rerank"]["order"] == "local"
    assert found["explain"]["rerank"]["reason"] == reason


def test_one_call_sees_the_fused_top_30_and_the_limit_still_holds(
    srv: ServerProcess, fake: FakeLlm
) -> None:
    args = {"project": "many", "query": "readers writer queue", "limit": 5, "explain": True}
    local = local_order(srv, fake, **args)
    assert len(local) == 5
    fake.requests.clear()
    fake.push(answer({"order": []}))  # nothing picked: the local order
    found = query(srv, **args)
    (request,) = fake.requests
    sent = request.body["messages"][1]["content"]
    assert sent.count("page_id ") == 30
    assert found["explain"]["rerank"]["candidates"] == 30
    assert ids(found) == local


def test_search_api_reranks_too(srv: ServerProcess, fake: FakeLlm) -> None:
    local = local_order(srv, fake)
    fake.push(answer({"order": local[::-1]}))
    with srv.client() as client:
        got = client.get("/api/v1/search", params={"q": QUERY, "project": PROJECT, "explain": 1})
    assert got.status_code == 200
    assert [hit["page_id"] for hit in got.json()["hits"]] == local[::-1]
    assert got.json()["explain"]["rerank"]["order"] == "provider"


def test_rerank_without_a_provider_says_so(tmp_path_factory: pytest.TempPathFactory) -> None:
    with llm_server(tmp_path_factory, None, **RERANK) as bare:
        seed(bare, PROJECT)
        found = query(bare, explain=True)
        assert found["explain"]["rerank"]["order"] == "local"
        assert found["explain"]["rerank"]["reason"] == "no_provider"
        plain = call(bare, "memory_query", project=PROJECT, query=QUERY)
        assert ids(plain) == ids(found) and len(ids(plain)) == 3


def test_calls_past_the_cap_keep_the_local_order_without_waiting(
    srv: ServerProcess, fake: FakeLlm
) -> None:
    """[answers] max_concurrency = 2: a third query while two reranks are in flight is busy."""
    local = local_order(srv, fake)
    fake.requests.clear()
    fake.push(*[slow(0.8, {"order": local[::-1]})] * 2)

    async def three() -> list[Any]:
        args = {"project": PROJECT, "query": QUERY, "explain": True}

        async def one() -> Any:
            async with connect(srv) as client:
                return (await client.call_tool("memory_query", args)).structured_content

        return await asyncio.gather(one(), one(), one())

    reasons = [found["explain"]["rerank"]["reason"] for found in asyncio.run(three())]
    assert "busy" in reasons
    assert len(fake.requests) == 3 - reasons.count("busy") <= 2


def test_a_reranked_search_leaves_out_a_project_the_user_may_not_read(
    srv: ServerProcess, fake: FakeLlm
) -> None:
    from tests.team_support import as_user, make_user, restrict

    body = {"body": "Hidden notes on the readers and the sqlite writer."}
    with srv.client() as root:
        assert root.put("/api/v1/projects/default/hidden/pages/a.md", json=body).is_success
    restrict(srv, "default", "hidden")
    key = make_user(srv, "outsider")
    with as_user(srv, key) as outsider, srv.client() as root:
        for client, shown in ((root, True), (outsider, False)):
            fake.push(error(400, "refused"))  # the local order stands
            found = client.get("/api/v1/search", params={"q": QUERY, "global": "true"}).json()
            assert any(h["project"] == "hidden" for h in found["hits"]) is shown
            asked = client.get("/api/v1/search", params={"q": QUERY, "project": "hidden"})
            assert asked.status_code == (200 if shown else 403)
