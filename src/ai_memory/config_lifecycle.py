"""The lifecycle sections of the settings: [decay], [maintenance], [sessions].

They sit beside ``config`` (which assembles them) so each file stays one thing.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ai_memory.core.kinds import Tier


class Section(BaseModel):
    model_config = ConfigDict(
        extra="forbid", populate_by_name=True, validate_default=True, defer_build=True
    )


class DecaySettings(Section):
    lambda_: float = Field(
        0.02,
        alias="lambda",
        ge=0.0,
        le=10.0,
        description="daily decay rate of episodic pages that are not used",
    )
    sigma: float = Field(
        0.6, ge=0.0, le=100.0, description="weight of use (ln(1 + reads)) in a page's retention"
    )
    mu: float = Field(
        0.04, ge=0.0, le=10.0, description="daily decay rate of the use term since the last read"
    )
    cold_threshold: float = Field(
        0.20, ge=0.0, le=100.0, description="a page whose retention falls below this is cold"
    )
    half_life_days: dict[Tier, float] = Field(
        {},
        description="per-tier half-life in days (its lambda is ln 2 / days); a tier left out uses "
        "lambda",
    )
    salience_step: float = Field(
        0.1, ge=0.0, le=1.0, description="how far one helpful or not_helpful moves salience"
    )
    salience_min: float = Field(
        0.5, ge=0.0, le=1.0, description="lowest salience feedback steps to"
    )
    salience_max: float = Field(
        1.5, ge=1.0, le=10.0, description="highest salience feedback steps to"
    )

    @field_validator("half_life_days")
    @classmethod
    def _positive_days(cls, value: dict[Tier, float]) -> dict[Tier, float]:
        for tier, days in value.items():
            if not 0 < days <= 100_000:
                raise ValueError(f"half-life of {tier} must be > 0 and ≤ 100000 days")
        return value


class MaintenanceSettings(Section):
    sweep_interval_h: float = Field(
        24.0, ge=0.0, le=8760, description="hours between forget sweeps in serve; 0 turns it off"
    )
    lint_interval_h: float = Field(
        24.0, ge=0.0, le=8760, description="hours between lint runs in serve; 0 turns it off"
    )
    backfill_interval_h: float = Field(
        0.0,
        ge=0.0,
        le=8760,
        description="hours between embedding backfills in serve; 0 (the default) turns it off",
    )
    overdue_delay_s: float = Field(
        120.0,
        ge=0.0,
        le=86400,
        description="overdue work starts this long after serve starts, not at once",
    )
    compact: bool = Field(
        False, description="compact cold episodic pages to their summary and key tokens first"
    )
    hard_delete_after_days: float = Field(
        180.0,
        ge=0.0,
        le=36500,
        description="evicted or deleted pages' history is purged after this",
    )
    observation_retention_days: float = Field(
        0.0,
        ge=0.0,
        le=36500,
        description="raw observations older than this are pruned once their session page "
        "is live; 0 keeps them forever",
    )
    batch_size: int = Field(
        50, ge=1, le=10_000, description="pages one sweep transaction touches at most"
    )
    similar_min: float = Field(
        0.90, ge=0.0, le=1.0, description="lint: cosine from which two cold pages are 'similar'"
    )
    similar_max: float = Field(
        0.99, ge=0.0, le=1.0, description="lint: cosine above which two pages count as copies"
    )


class SessionsSettings(Section):
    idle_end_after_hours: float = Field(
        0.0,
        ge=0.0,
        le=720,
        description="end a session after this many hours without events; 0 uses hooks.idle_end_s",
    )
