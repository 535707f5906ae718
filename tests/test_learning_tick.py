"""The learning loop's tick: one new session per project per tick, after a first-run
watermark, and nothing at all without a provider."""

from __future__ import annotations

from pathlib import Path

from tests.fake_llm import FakeLlm, fake_llm
from tests.hooks_support import app_client
from tests.learning_support import finish_session, llm_settings, review

__all__ = ["fake_llm"]


def test_the_tick_skips_history_and_reviews_each_new_session_once(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    with app_client(data_dir) as client:  # before a provider was configured
        finish_session(client, "shop", "s-old", "history from before the upgrade")
        assert client.portal.call(client.app.state.learning.tick) == []  # no provider: nothing
        assert "learning" not in client.get("/admin/status").json()  # status as before
    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-new", "a lesson from after the upgrade")
        finish_session(client, "cafe", "s-cafe", "the espresso machine needs descaling")
        fake_llm.push(review(("_rules/a.md", "# A")), review(("_rules/b.md", "# B")))
        tick = client.app.state.learning.tick
        first = client.portal.call(tick)
        assert sorted((r["project"], r["session_id"]) for r in first) == [
            ("cafe", "s-cafe"),
            ("shop", "s-new"),
        ]
        sent = " ".join(str(body) for body in fake_llm.bodies())
        assert "after the upgrade" in sent and "espresso" in sent
        assert "before the upgrade" not in sent
        finish_session(client, "shop", "s-2", "another lesson")
        finish_session(client, "shop", "s-3", "and one more")
        fake_llm.push(review(), review())
        assert [r["session_id"] for r in client.portal.call(tick)] == ["s-2"]  # one per tick
        assert [r["session_id"] for r in client.portal.call(tick)] == ["s-3"]
        assert client.portal.call(tick) == []
        assert len(fake_llm.requests) == 4
        queue = client.get("/api/v1/pending-writes").json()["pending_writes"]
        assert sorted(w["path"] for w in queue) == ["_rules/a.md", "_rules/b.md"]
        status = client.get("/admin/status").json()["learning"]
        assert status["pending_writes"] == 2 and status["ticks"] == 4
        assert status["require_approval"] is True and status["interval_h"] == 1.0


def test_a_provider_that_cannot_answer_leaves_the_session_for_the_next_tick(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    from tests.fake_llm import answer, error

    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-1", "a lesson")
        fake_llm.push(*[error(503)] * 4)
        tick = client.app.state.learning.tick
        assert client.portal.call(tick) == []
        fake_llm.replies.clear()
        fake_llm.push(answer("not json at all"))
        (bad,) = client.portal.call(tick)  # a bad answer moves past the session
        assert bad["session_id"] == "s-1" and "error" in bad
        assert client.portal.call(tick) == []


def test_a_review_the_provider_refuses_moves_past_the_session(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    """A 400 (say, a session too long for the model's context) would be refused again
    every hour: the session is passed, not retried forever ahead of the newer ones."""
    from tests.fake_llm import error

    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-1", "a session the model cannot take")
        fake_llm.push(error(400, "maximum context length exceeded"))
        tick = client.app.state.learning.tick
        (refused,) = client.portal.call(tick)
        assert refused["session_id"] == "s-1" and "HTTP 400" in refused["error"]
        finish_session(client, "shop", "s-2", "a later lesson")
        fake_llm.push(review())
        assert [r["session_id"] for r in client.portal.call(tick)] == ["s-2"]
        assert len(fake_llm.requests) == 2


def test_a_refused_key_leaves_the_session_for_the_next_tick(
    data_dir: Path, fake_llm: FakeLlm
) -> None:
    from tests.fake_llm import error

    with app_client(data_dir, **llm_settings(fake_llm)) as client:
        finish_session(client, "shop", "s-1", "a lesson")
        fake_llm.push(error(401, "invalid key"))
        tick = client.app.state.learning.tick
        assert client.portal.call(tick) == []  # the key is fixed, then the session is read
        fake_llm.push(review())
        assert [r["session_id"] for r in client.portal.call(tick)] == ["s-1"]
