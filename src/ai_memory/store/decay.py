"""Decay math: how much a page is still worth keeping. Pure functions, no I/O.

retention = salience * exp(-lambda * age_days)
          + sigma * ln(1 + access_count) * exp(-mu * days_since_access)

A page whose retention falls below the cold threshold is cold; the forget sweep
evicts cold episodic pages. Tiers decide what ``age`` means, or whether a page
decays at all:

* working: lives as long as its session (the sweep evicts it once that ended);
  it never ages.
* episodic: ages from its latest version.
* semantic: never decays (it is only ever superseded).
* procedural: ages only from the last time it was seen (written or read), so a
  procedure that keeps being used stays, one nobody re-observes fades.

Pinned pages and ``_slots/`` never decay.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

DAY_S = 86400.0
NEVER = math.inf

# Feedback signals that step salience, and those that floor it.
STEPS = {"helpful": 1, "not_helpful": -1}
FLOORING = frozenset({"stale", "wrong"})


@dataclass(frozen=True, slots=True)
class DecayParams:
    """The [decay] settings, as numbers."""

    lambda_: float = 0.02
    sigma: float = 0.6
    mu: float = 0.04
    cold_threshold: float = 0.20
    half_life_days: Mapping[str, float] = field(default_factory=dict)
    salience_step: float = 0.1
    salience_min: float = 0.5
    salience_max: float = 1.5
    salience_floor: float = 0.0

    def rate(self, tier: str) -> float:
        """λ of a tier: ln 2 / its half-life when one is set, else the shared λ."""
        days = self.half_life_days.get(tier)
        if days:
            return math.log(2) / days
        return self.lambda_


@dataclass(frozen=True, slots=True)
class PageAge:
    """What the math needs to know of one page version."""

    tier: str
    path: str
    pinned: bool
    created_at: str
    access_count: int = 0
    last_access_at: str | None = None
    salience: float = 1.0


def never_decays(page: PageAge) -> bool:
    return page.pinned or page.path.startswith("_slots/") or page.tier in ("semantic", "working")


def days_between(earlier: str | None, later: datetime) -> float:
    """Days from an ISO time to ``later``; 0 for a time in the future or none."""
    if not earlier:
        return 0.0
    start = datetime.fromisoformat(earlier.replace("Z", "+00:00"))
    return max((later - start).total_seconds() / DAY_S, 0.0)


def retention(page: PageAge, now: datetime, params: DecayParams) -> float:
    """The page's retention; ``math.inf`` for a page that never decays."""
    if never_decays(page):
        return NEVER
    since_access = days_between(page.last_access_at, now) if page.last_access_at else 0.0
    if page.tier == "procedural":
        age = days_between(max(page.created_at, page.last_access_at or ""), now)
    else:
        age = days_between(page.created_at, now)
    return score(
        page.salience,
        age,
        page.access_count,
        since_access,
        rate=params.rate(page.tier),
        sigma=params.sigma,
        mu=params.mu,
    )


def score(
    salience: float,
    age_days: float,
    access_count: int,
    days_since_access: float,
    *,
    rate: float,
    sigma: float,
    mu: float,
) -> float:
    """The formula itself; negative ages count as zero, huge ones underflow to zero."""
    age_days = max(age_days, 0.0)
    days_since_access = max(days_since_access, 0.0)
    base = salience * math.exp(-rate * age_days)
    use = sigma * math.log1p(max(access_count, 0)) * math.exp(-mu * days_since_access)
    return base + use


def dormant(page: PageAge, now: datetime, params: DecayParams) -> bool:
    """Whether a page would be cold if its tier let it decay (semantic and procedural pages
    never leave, but lint points out unused near-duplicates among them). Pinned never is."""
    if page.pinned or page.path.startswith("_slots/"):
        return False
    since_access = days_between(page.last_access_at, now) if page.last_access_at else 0.0
    seen = max(page.created_at, page.last_access_at or "")
    value = score(
        page.salience,
        days_between(seen, now),
        page.access_count,
        since_access,
        rate=params.rate(page.tier),
        sigma=params.sigma,
        mu=params.mu,
    )
    return value < params.cold_threshold


def is_cold(page: PageAge, now: datetime, params: DecayParams) -> bool:
    return retention(page, now, params) < params.cold_threshold


def salience(signals: list[str], params: DecayParams) -> float:
    """Salience derived from the feedback on one page version, in order.

    helpful and not_helpful step it within [salience_min, salience_max]; stale or
    wrong floor it (the page is cold at once unless it is read).
    """
    value = 1.0
    for signal in signals:
        if signal in FLOORING:
            return params.salience_floor
        step = STEPS.get(signal, 0) * params.salience_step
        value = min(max(value + step, params.salience_min), params.salience_max)
    return value
