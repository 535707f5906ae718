"""The plan from a provider answer to page writes: pure, so checked without a server."""

from __future__ import annotations

from ai_memory.consolidate.consolidation_plan import plan_writes
from ai_memory.consolidate.consolidation_reads import Existing, SessionState
from ai_memory.consolidate.consolidation_schema import ConsolidationAnswer
from ai_memory.core.identity import Scope
from tests.consolidate_support import durable_answer

CAPTURED = "# Fix the tests\n\nChanged shop/db.py.\n\n- Agent: claude-code\n"


def state(session_body: str, durable: dict[str, Existing]) -> SessionState:
    return SessionState(Scope("default", "shop"), "s1", 7, 41, session_body, "Fix", durable)


def test_planning_again_over_its_own_output_writes_the_same_text() -> None:
    answer = ConsolidationAnswer.model_validate(durable_answer("s1"))
    first = plan_writes(state(CAPTURED, {}), answer, multi_page=True, max_pages=8)
    written = {w.ref.path: w.body for w in first.writes}
    durable = {
        path: Existing(i, "t", body, pinned=False)
        for i, (path, body) in enumerate(written.items())
        if not path.startswith("sessions/")
    }
    second = plan_writes(
        state(written["sessions/s1.md"], durable), answer, multi_page=True, max_pages=8
    )
    assert {w.ref.path: w.body for w in second.writes} == written
    assert written["sessions/s1.md"].count("## Summary") == 1
    assert written["sessions/s1.md"].endswith(CAPTURED.split("\n", 2)[2])
    assert {p.action for p in second.pages} == {"update"}


def test_a_pinned_page_is_left_out_and_single_page_writes_the_session_alone() -> None:
    answer = ConsolidationAnswer.model_validate(durable_answer("s1"))
    pinned = {"concepts/house-rules.md": Existing(3, "House rules", "# Rules\n", pinned=True)}
    plan = plan_writes(state(CAPTURED, pinned), answer, multi_page=True, max_pages=8)
    assert "concepts/house-rules.md" not in {w.ref.path for w in plan.writes}
    assert "[[concepts/house-rules.md]]" not in plan.session_write.body
    single = plan_writes(state(CAPTURED, pinned), answer, multi_page=False, max_pages=8)
    assert [w.ref.path for w in single.writes] == ["sessions/s1.md"]
    capped = plan_writes(state(CAPTURED, {}), answer, multi_page=True, max_pages=2)
    assert len(capped.writes) == 3


def test_a_page_said_again_is_reaffirmed_not_rewritten() -> None:
    answer = ConsolidationAnswer.model_validate(durable_answer("s1"))
    first = plan_writes(state(CAPTURED, {}), answer, multi_page=True, max_pages=8)
    durable = {
        w.ref.path: Existing(i, str(w.meta["title"]), w.body, pinned=False)
        for i, w in enumerate(first.writes)
        if not w.ref.path.startswith("sessions/")
    }
    later = SessionState(Scope("default", "shop"), "s2", 3, 50, CAPTURED, "Again", durable)
    again = plan_writes(later, answer, multi_page=True, max_pages=8)
    assert [w.ref.path for w in again.writes] == ["sessions/s2.md"]
    assert {p.page_id for p in again.reaffirmed} == {e.page_id for e in durable.values()}
    assert "[[decisions/use-wal.md]]" in again.session_write.body
