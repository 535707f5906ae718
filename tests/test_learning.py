"""The reviewed learning loop over the whole app: proposals wait, apply through Wiki on
approval, are refused when their target changed, auto-apply without approval.

The server's real openai-compat provider talks to the fake LLM service on loopback.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ai_memory.config import Config
from tests.fake_llm import FakeLlm, fake_llm
from tests.hooks_support import app_client
from tests.learning_support import finish_session, improve, llm_settings, page_url, review

__all__ = ["fake_llm"]

RULE = "_rules/rounding.md"
RULE_BODY = "# Rounding\n\nRound money to cents once, at checkout; never per line."


def test_a_proposal_waits_for_approval_then_lands_as_a_page(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-1", "the cart total is off by a cent")
        fake_llm.push(review((RULE, RULE_BODY), ("decisions/x.md", "not a rule")))
        report = improve(client, "shop").json()
        assert report["session_id"] == "s-1"
        (proposal,) = report["proposals"]
        assert proposal["state"] == "pending" and proposal["base_page_id"] is None
        assert report["skipped"] == [
            {
                "path": "decisions/x.md",
                "reason": "decisions/x.md is not under _rules/ or procedures/",
            }
        ]
        sent = str(fake_llm.bodies()[0])
        assert "the cart total is off by a cent" in sent and "untrusted-history" in sent
        assert client.get(page_url("shop", RULE)).status_code == 404  # nothing written yet

        queue = client.get("/api/v1/pending-writes").json()["pending_writes"]
        assert [w["id"] for w in queue] == [proposal["id"]]
        shown = client.get(f"/api/v1/pending-writes/{proposal['id']}").json()
        assert "+Round money to cents once, at checkout; never per line." in shown["diff"]
        assert shown["diff"].startswith("--- /dev/null")

        applied = client.post(
            f"/api/v1/pending-writes/{proposal['id']}/approve", json={"by": "ana"}
        ).json()
        assert applied["state"] == "applied" and applied["decided_by"] == "ana"
        page = client.get(page_url("shop", RULE)).json()
        assert page["page_id"] == applied["result_page_id"] and page["kind"] == "rule"
        assert page["body"].strip() == RULE_BODY
        hits = client.get(
            "/api/v1/search", params={"q": "checkout cents", "project": "shop"}
        ).json()["hits"]
        assert RULE in [hit["path"] for hit in hits]  # indexed with its data
        assert client.post("/api/v1/commit").status_code == 200
    wiki = Config.load(data_dir, {}).wiki_dir
    assert (
        (wiki / "default" / "shop" / RULE).read_text().rstrip().endswith(RULE_BODY.split("\n")[-1])
    )
    log = subprocess.run(
        ["git", "log", "--format=%s", "--", f"default/shop/{RULE}"],
        cwd=wiki,
        capture_output=True,
        text=True,
        check=True,
    )
    assert log.stdout.strip()  # in git history


def test_approving_after_the_target_changed_is_refused_never_merged(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        first = client.put(page_url("shop", RULE), json={"body": "# Rounding\n\nRound at the end."})
        finish_session(client, "shop", "s-1", "rounding again")
        fake_llm.push(review((RULE, RULE_BODY), ("procedures/release.md", "1. tag\n2. push")))
        made = improve(client, "shop").json()["proposals"]
        edit, new_page = made
        assert edit["base_page_id"] == first.json()["page_id"]
        by_hand = client.put(
            page_url("shop", RULE), json={"body": "# Rounding\n\nBankers' rounding."}
        )
        client.put(page_url("shop", "procedures/release.md"), json={"body": "1. ask first"})

        expected = {
            edit["id"]: f"proposed against page_id {edit['base_page_id']}, "
            f"now page_id {by_hand.json()['page_id']}",
            new_page["id"]: "was created (page_id",
        }
        for pending_id, reason in expected.items():
            answer = client.post(f"/api/v1/pending-writes/{pending_id}/approve")
            assert answer.status_code == 409
            assert "nothing was merged" in answer.json()["message"]
            row = client.get(f"/api/v1/pending-writes/{pending_id}").json()
            assert row["state"] == "refused" and reason in row["error"]
        assert "Bankers' rounding." in client.get(page_url("shop", RULE)).json()["body"]
        again = client.post(f"/api/v1/pending-writes/{edit['id']}/approve")
        assert again.status_code == 409 and "already refused" in again.json()["message"]


def test_without_required_approval_proposals_apply_at_once(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    settings = llm_settings(fake_llm, learning__require_approval="false")
    with app_client(data_dir, **settings) as client:
        finish_session(client, "shop", "s-1", "we always run make check before pushing")
        fake_llm.push(review(("procedures/push.md", "1. make check\n2. git push")))
        (proposal,) = improve(client, "shop").json()["proposals"]
        assert proposal["state"] == "applied"
        page = client.get(page_url("shop", "procedures/push.md")).json()
        assert page["page_id"] == proposal["result_page_id"] and page["kind"] == "procedure"
        row = client.get(f"/api/v1/pending-writes/{proposal['id']}").json()
        assert row["state"] == "applied" and row["decided_by"] == "learning"


def test_rejecting_records_who_and_when_and_writes_nothing(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-1", "a session")
        fake_llm.push(review((RULE, RULE_BODY)))
        (proposal,) = improve(client, "shop").json()["proposals"]
        url = f"/api/v1/pending-writes/{proposal['id']}"
        rejected = client.post(url + "/reject", json={"by": "bo", "reason": "too strict"}).json()
        assert rejected["state"] == "rejected" and rejected["decided_by"] == "bo"
        assert rejected["decided_at"] and rejected["error"] == "too strict"
        assert client.post(url + "/approve").status_code == 409
        assert client.get(page_url("shop", RULE)).status_code == 404
        assert client.get("/api/v1/pending-writes").json()["pending_writes"] == []
        everything = client.get("/api/v1/pending-writes", params={"state": "all"}).json()
        assert [w["state"] for w in everything["pending_writes"]] == ["rejected"]


def test_pinned_pages_limits_and_dry_runs(data_dir: Path, fake_llm: FakeLlm) -> None:
    settings = llm_settings(fake_llm, learning__max_proposals="2", learning__max_body_chars="300")
    with app_client(data_dir, **settings) as client:
        client.put(page_url("shop", "_rules/house.md"), json={"body": "# House", "pinned": True})
        finish_session(client, "shop", "s-1", "a session")
        proposals = [
            ("_rules/house.md", "# House\n\nRewritten."),
            ("_rules/long.md", "x" * 301),
            ("_rules/a.md", "# A"),
            ("_rules/b.md", "# B"),
            ("_rules/c.md", "# C"),
        ]
        fake_llm.push(review(*proposals))
        dry = improve(client, "shop", dry_run=True).json()
        assert [p["path"] for p in dry["proposals"]] == ["_rules/a.md"]
        assert [p["id"] for p in dry["proposals"]] == [None]
        reasons = {s["path"]: s["reason"] for s in dry["skipped"]}
        assert reasons["_rules/house.md"] == "the page is pinned"
        assert "max_body_chars = 300" in reasons["_rules/long.md"]
        assert reasons["_rules/b.md"] == reasons["_rules/c.md"] == "over [learning] max_proposals"
        assert client.get("/api/v1/pending-writes").json()["pending_writes"] == []
        assert "Propose at most 2 edits" in str(fake_llm.bodies()[0])


def test_without_a_provider_the_reviewer_says_so(data_dir: Path) -> None:
    with app_client(data_dir) as client:
        finish_session(client, "shop", "s-1", "a session")
        answer = improve(client, "shop")
        assert answer.status_code == 503
        assert answer.json()["error"] == "llm_unavailable"
        assert "no LLM provider is configured" in answer.json()["message"]
        assert client.get("/api/v1/pending-writes").json()["pending_writes"] == []


def test_bad_input_is_a_clear_4xx(data_dir: Path, fake_llm: FakeLlm) -> None:
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        assert client.get("/api/v1/pending-writes/99").status_code == 404
        assert client.get("/api/v1/pending-writes/zero").status_code == 422
        wrong_state = client.get("/api/v1/pending-writes", params={"state": "maybe"})
        assert wrong_state.status_code == 400 and "state must be one of" in wrong_state.text
        assert client.post("/api/v1/pending-writes/99/approve").status_code == 404
        missing = improve(client, "shop", session_id="nope")
        assert missing.status_code == 404 and "no completed session" in missing.json()["message"]
        assert fake_llm.requests == []  # nothing was sent for a session that does not exist


def test_a_hand_edit_or_a_pin_since_the_proposal_refuses_it(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        client.put(page_url("shop", RULE), json={"body": "# Rounding\n\nRound at the end."})
        client.put(page_url("shop", "_rules/house.md"), json={"body": "# House\n\nBe kind."})
        finish_session(client, "shop", "s-1", "rounding again")
        fake_llm.push(review((RULE, RULE_BODY), ("_rules/house.md", "# House\n\nBe brief.")))
        edit, house = improve(client, "shop").json()["proposals"]
        file = Config.load(data_dir, {}).wiki_dir / "default" / "shop" / RULE
        file.write_text(file.read_text().replace("Round at the end.", "Edited in vim."))
        client.put(
            page_url("shop", "_rules/house.md"),
            json={"body": "# House\n\nBe kind.", "pinned": True},
        )

        refused = client.post(f"/api/v1/pending-writes/{edit['id']}/approve")
        assert refused.status_code == 409 and "changed since" in refused.json()["message"]
        pinned = client.post(f"/api/v1/pending-writes/{house['id']}/approve")
        assert pinned.status_code == 409 and "is pinned" in pinned.json()["message"]
        assert "Edited in vim." in client.get(page_url("shop", RULE)).json()["body"]
        assert "Be kind." in client.get(page_url("shop", "_rules/house.md")).json()["body"]
