"""Bad consolidation requests get a clear 4xx naming what is wrong, and ask the provider nothing."""

from __future__ import annotations

from pathlib import Path

from tests.consolidate_support import PROJECT, session_items
from tests.fake_llm import FakeLlm, answer
from tests.hooks_support import app_client


def test_bad_requests_name_the_problem_and_cost_nothing(data_dir: Path) -> None:
    with FakeLlm() as fake:
        settings = {
            "llm__provider": "openai-compat",
            "llm__model": "fake-model",
            "llm__base_url": fake.openai_url,
        }
        with app_client(data_dir, **settings) as client:
            nothing = client.post("/api/v1/consolidate", json=PROJECT)
            assert nothing.status_code == 404
            assert "no completed session" in nothing.json()["message"]

            open_session = session_items("open-1")[:-1]  # no SessionEnd
            client.post("/hook/batch", json=open_session)
            still_open = client.post(
                "/api/v1/consolidate", json={**PROJECT, "session_id": "open-1"}
            )
            assert still_open.status_code == 400
            assert "has not ended yet" in still_open.json()["message"]

            unknown = client.post("/api/v1/consolidate", json={**PROJECT, "session_id": "nope"})
            assert unknown.status_code == 404 and "no session nope" in unknown.json()["message"]

            extra = client.post("/api/v1/consolidate", json={**PROJECT, "session": "x"})
            assert extra.status_code == 422 and "session" in extra.text
            long_id = client.post("/api/v1/consolidate", json={**PROJECT, "session_id": "x" * 201})
            assert long_id.status_code == 422 and "session_id" in extra.text + long_id.text
            state = client.get("/api/v1/consolidate/jobs", params={"state": "lost"})
            assert state.status_code == 422 and "state" in state.text
            assert client.get("/api/v1/consolidate/jobs").json()["jobs"] == []
        assert fake.requests == []


def test_an_answer_outside_the_schema_is_refused_whole(data_dir: Path) -> None:
    with FakeLlm() as fake:
        bad = {
            "title": "t",
            "summary": "s",
            "pages": [{"folder": "concepts", "slug": "../x", "title": "x", "body": "x"}],
        }
        fake.push(answer(bad))
        settings = {
            "llm__provider": "openai-compat",
            "llm__model": "fake-model",
            "llm__base_url": fake.openai_url,
            "consolidation__retry_backoff_s": "3600",
        }
        with app_client(data_dir, **settings) as client:
            client.post("/hook/batch", json=session_items("b-1"))
            client.post("/api/v1/sessions/flush", params={"timeout": 30})
            refused = client.post("/api/v1/consolidate", json={**PROJECT, "session_id": "b-1"})
            assert refused.status_code == 502 and refused.json()["error"] == "llm_bad_answer"
            (job,) = client.get("/api/v1/consolidate/jobs").json()["jobs"]
            assert job["state"] == "queued" and job["attempts"] == 1  # tried again later
            session = client.get("/api/v1/projects/default/shop/pages/sessions/b-1.md").json()
            assert session["version"] == 1
        assert not (data_dir / "wiki/default/shop/concepts").exists()
