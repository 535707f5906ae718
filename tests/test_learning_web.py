"""The pending-writes page: the web UI's only writes, each POST bound to a CSRF token
tied to the sign-in cookie, on top of the same-origin rule."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ai_memory.web.webauth import csrf_for
from tests.fake_llm import FakeLlm, fake_llm
from tests.hooks_support import app_client
from tests.learning_support import finish_session, improve, llm_settings, page_url, review

__all__ = ["fake_llm"]
RULE = "_rules/rounding.md"


@pytest.fixture
def queued(data_dir: Path, fake_llm: FakeLlm) -> Iterator[tuple[TestClient, int]]:
    """A signed-in browser-like client and one pending proposal."""
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-1", "rounding")
        fake_llm.push(review((RULE, "# Rounding\n\nRound once, at checkout.")))
        (proposal,) = improve(client, "shop").json()["proposals"]
        token = client.headers.pop("Authorization").removeprefix("Bearer ")
        assert client.get("/web/login", params={"token": token}).status_code == 200
        client.headers["x-test-token"] = token  # the test's own note, no header the app reads
        yield client, proposal["id"]


def post(client: TestClient, url: str, **form: Any) -> Any:
    return client.post(url, data=form, follow_redirects=False)


def state_of(client: TestClient, pending_id: int) -> str:
    token = client.headers["x-test-token"]
    answer = client.get(
        f"/api/v1/pending-writes/{pending_id}", headers={"Authorization": f"Bearer {token}"}
    )
    return str(answer.json()["state"])


def test_the_queue_shows_each_proposal_with_its_diff_and_a_csrf_token(
    queued: tuple[TestClient, int],
) -> None:
    client, pending_id = queued
    page = client.get("/web/pending-writes")
    assert page.status_code == 200
    assert f'id="pw-{pending_id}"' in page.text and "+Round once, at checkout." in page.text
    token = client.headers["x-test-token"]
    assert re.findall(r'name="csrf" value="([0-9a-f]+)"', page.text) == [csrf_for(token)] * 2
    assert token not in page.text
    assert 'href="/web/pending-writes"' in client.get("/web").text  # in the nav


@pytest.mark.parametrize("csrf", [None, "", "0" * 64, "wrong"])
def test_a_post_without_the_right_csrf_token_is_refused(
    queued: tuple[TestClient, int], csrf: str | None
) -> None:
    client, pending_id = queued
    form = {} if csrf is None else {"csrf": csrf}
    for action in ("approve", "reject"):
        answer = post(client, f"/web/pending-writes/{pending_id}/{action}", **form)
        assert answer.status_code == 403
        assert "did not come from this page" in answer.text
    assert state_of(client, pending_id) == "pending"


def test_a_foreign_origin_or_no_cookie_is_refused_even_with_the_token(
    queued: tuple[TestClient, int],
) -> None:
    client, pending_id = queued
    csrf = csrf_for(client.headers["x-test-token"])
    url = f"/web/pending-writes/{pending_id}/approve"
    foreign = client.post(
        url, data={"csrf": csrf}, headers={"Origin": "http://evil.example"}, follow_redirects=False
    )
    assert foreign.status_code == 403
    client.cookies.clear()
    assert post(client, url, csrf=csrf).status_code == 401
    assert state_of(client, pending_id) == "pending"


def test_approving_from_the_page_applies_and_says_so(queued: tuple[TestClient, int]) -> None:
    client, pending_id = queued
    csrf = csrf_for(client.headers["x-test-token"])
    answer = post(client, f"/web/pending-writes/{pending_id}/approve", csrf=csrf)
    assert answer.status_code == 303
    assert answer.headers["location"] == f"/web/pending-writes?done={pending_id}"
    shown = client.get(answer.headers["location"]).text
    assert f"#{pending_id} {RULE}: applied." in shown and "Nothing waits for a decision." in shown
    assert state_of(client, pending_id) == "applied"
    again = post(client, f"/web/pending-writes/{pending_id}/approve", csrf=csrf)
    assert again.status_code == 409 and "already applied" in again.text


def test_rejecting_from_the_page_keeps_the_reason(queued: tuple[TestClient, int]) -> None:
    client, pending_id = queued
    csrf = csrf_for(client.headers["x-test-token"])
    url = f"/web/pending-writes/{pending_id}/reject"
    assert post(client, url, csrf=csrf, reason="not ours").status_code == 303
    token = client.headers["x-test-token"]
    row = client.get(
        f"/api/v1/pending-writes/{pending_id}", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert (row["state"], row["decided_by"], row["error"]) == ("rejected", "web", "not ours")
    rejected = client.get("/web/pending-writes", params={"state": "rejected"}).text
    assert "rejected by web" in rejected and "not ours" in rejected
    assert client.get(page_url("shop", RULE)).status_code in (303, 401)  # API: no cookie use


def test_bad_web_input_is_a_clear_4xx(queued: tuple[TestClient, int]) -> None:
    client, _ = queued
    csrf = csrf_for(client.headers["x-test-token"])
    assert post(client, "/web/pending-writes/99/approve", csrf=csrf).status_code == 404
    assert post(client, "/web/pending-writes/x/approve", csrf=csrf).status_code == 400
    assert post(client, "/web/pending-writes/1/merge", csrf=csrf).status_code == 404
    assert client.get("/web/pending-writes", params={"state": "maybe"}).status_code == 400
    big = client.post(
        "/web/pending-writes/1/reject", content=b"csrf=" + b"a" * 9000, follow_redirects=False
    )
    assert big.status_code == 403


def test_the_queue_pages_on_by_id(data_dir: Path, fake_llm: FakeLlm) -> None:
    settings = llm_settings(fake_llm, learning__max_proposals="20")
    with app_client(data_dir, **settings) as client:
        finish_session(client, "shop", "s-1", "many lessons")
        fake_llm.push(review(*[(f"_rules/r-{n}.md", f"# R{n}") for n in range(20)]))
        fake_llm.push(review(*[(f"_rules/s-{n}.md", f"# S{n}") for n in range(5)]))
        improve(client, "shop").raise_for_status()
        improve(client, "shop").raise_for_status()
        token = client.headers.pop("Authorization").removeprefix("Bearer ")
        client.get("/web/login", params={"token": token})
        first = client.get("/web/pending-writes").text
        shown = [int(n) for n in re.findall(r'id="pw-(\d+)"', first)]
        assert shown == list(range(25, 5, -1))  # the newest 20
        older = re.search(r'id="older" href="([^"]+)"', first)
        assert older is not None
        rest = client.get(older[1].replace("&amp;", "&")).text
        assert [int(n) for n in re.findall(r'id="pw-(\d+)"', rest)] == [5, 4, 3, 2, 1]
        assert 'id="older"' not in rest
        assert client.get("/web/pending-writes", params={"before": "x"}).status_code == 400
