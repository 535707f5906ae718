"""The decay math at its edges: zero age, huge age, pinned, each tier, per-tier half-life."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest

from ai_memory.config import Config
from ai_memory.core.clock import iso
from ai_memory.core.errors import ConfigError
from ai_memory.store.decay import (
    DecayParams,
    PageAge,
    days_between,
    is_cold,
    retention,
    salience,
    score,
)

NOW = datetime(2026, 6, 1, tzinfo=UTC)
PARAMS = DecayParams()


def page(tier: str = "episodic", days: float = 0.0, **extra: object) -> PageAge:
    fields: dict[str, object] = {
        "tier": tier,
        "path": "sessions/s.md",
        "pinned": False,
        "created_at": iso(NOW - timedelta(days=days)),
    }
    fields.update(extra)
    return PageAge(**fields)  # type: ignore[arg-type]


def test_zero_age_is_the_salience() -> None:
    assert retention(page(), NOW, PARAMS) == pytest.approx(1.0)
    assert retention(page(salience=1.5), NOW, PARAMS) == pytest.approx(1.5)


def test_defaults_follow_the_formula() -> None:
    expected = math.exp(-0.02 * 50) + 0.6 * math.log(1 + 3) * math.exp(-0.04 * 10)
    aged = page(days=50, access_count=3, last_access_at=iso(NOW - timedelta(days=10)))
    assert retention(aged, NOW, PARAMS) == pytest.approx(expected)


def test_huge_age_underflows_to_zero_and_is_cold() -> None:
    ancient = page(days=100_000)
    assert retention(ancient, NOW, PARAMS) == 0.0
    assert is_cold(ancient, NOW, PARAMS)
    assert score(1.0, 1e300, 10**9, 1e300, rate=0.02, sigma=0.6, mu=0.04) == 0.0


def test_a_page_from_the_future_counts_as_new() -> None:
    assert retention(page(days=-5), NOW, PARAMS) == pytest.approx(1.0)
    assert score(1.0, -3, -1, -2, rate=0.02, sigma=0.6, mu=0.04) == pytest.approx(1.0)


def test_cold_threshold_is_crossed_where_the_math_says() -> None:
    # e^(-0.02 d) < 0.2  <=>  d > ln 5 / 0.02 ≈ 80.47 days
    assert not is_cold(page(days=80), NOW, PARAMS)
    assert is_cold(page(days=81), NOW, PARAMS)


def test_reads_keep_a_page_warm_and_fade_with_time() -> None:
    read_now = page(days=200, access_count=2, last_access_at=iso(NOW))
    assert not is_cold(read_now, NOW, PARAMS)
    read_long_ago = page(days=200, access_count=2, last_access_at=iso(NOW - timedelta(days=100)))
    assert is_cold(read_long_ago, NOW, PARAMS)


@pytest.mark.parametrize("tier", ["semantic", "working"])
def test_semantic_and_working_never_decay(tier: str) -> None:
    assert retention(page(tier, days=10_000), NOW, PARAMS) == math.inf


def test_pinned_and_slots_never_decay() -> None:
    assert retention(page(days=10_000, pinned=True), NOW, PARAMS) == math.inf
    assert retention(page(days=10_000, path="_slots/now.md"), NOW, PARAMS) == math.inf


def test_procedural_ages_only_from_when_it_was_last_seen() -> None:
    unseen = page("procedural", days=400)
    assert is_cold(unseen, NOW, PARAMS)
    seen = page("procedural", days=400, access_count=1, last_access_at=iso(NOW - timedelta(days=1)))
    assert not is_cold(seen, NOW, PARAMS)
    # The same page as episodic ages from its write and is cold despite the read.
    assert retention(
        page("episodic", days=400, access_count=1, last_access_at=iso(NOW)), NOW, PARAMS
    ) < retention(seen, NOW, PARAMS)


def test_per_tier_half_life_sets_lambda_and_others_keep_it() -> None:
    params = DecayParams(half_life_days={"episodic": 10.0})
    assert params.rate("episodic") == pytest.approx(math.log(2) / 10)
    assert params.rate("procedural") == 0.02
    assert retention(page(days=10), NOW, params) == pytest.approx(0.5)
    assert retention(page(days=20), NOW, params) == pytest.approx(0.25)


def test_salience_steps_within_its_clamp_and_stale_floors_it() -> None:
    assert salience([], PARAMS) == 1.0
    assert salience(["helpful"], PARAMS) == pytest.approx(1.1)
    assert salience(["helpful"] * 50, PARAMS) == pytest.approx(1.5)
    assert salience(["not_helpful"] * 50, PARAMS) == pytest.approx(0.5)
    assert salience(["helpful", "stale", "helpful"], PARAMS) == 0.0
    assert salience(["wrong"], PARAMS) == 0.0


def test_days_between_handles_missing_and_future_times() -> None:
    assert days_between(None, NOW) == 0.0
    assert days_between(iso(NOW + timedelta(days=3)), NOW) == 0.0
    assert days_between(iso(NOW - timedelta(hours=36)), NOW) == pytest.approx(1.5)


def test_config_reads_half_lives_and_refuses_bad_ones(tmp_path: object) -> None:
    env = {"AI_MEMORY_DECAY__HALF_LIFE_DAYS": '{"episodic": 30}'}
    config = Config.load(str(tmp_path), env)
    assert config.decay.half_life_days == {"episodic": 30.0}
    with pytest.raises(ConfigError, match="half_life_days"):
        Config.load(str(tmp_path), {"AI_MEMORY_DECAY__HALF_LIFE_DAYS": '{"episodic": 0}'})
    with pytest.raises(ConfigError, match="half_life_days"):
        Config.load(str(tmp_path), {"AI_MEMORY_DECAY__HALF_LIFE_DAYS": '{"nope": 3}'})


def test_sessions_idle_end_after_hours_overrides_the_hooks_key(tmp_path: object) -> None:
    assert Config.load(str(tmp_path), {}).idle_end_s == 1800.0
    legacy = Config.load(str(tmp_path), {"AI_MEMORY_HOOKS__IDLE_END_S": "600"})
    assert legacy.idle_end_s == 600.0
    hours = Config.load(str(tmp_path), {"AI_MEMORY_SESSIONS__IDLE_END_AFTER_HOURS": "2"})
    assert hours.idle_end_s == 7200.0


def test_dormant_ages_semantic_pages_for_lint_but_never_pinned_ones() -> None:
    from ai_memory.store.decay import dormant

    assert not dormant(page("semantic", days=10), NOW, PARAMS)
    assert dormant(page("semantic", days=400), NOW, PARAMS)
    assert not dormant(page("semantic", days=400, pinned=True), NOW, PARAMS)
    read = page("procedural", days=400, access_count=1, last_access_at=iso(NOW))
    assert not dormant(read, NOW, PARAMS)
