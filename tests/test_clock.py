"""The store's one time format: ISO 8601 UTC with microseconds, sortable as text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from ai_memory.core.clock import iso, parse_iso


def test_a_year_below_1000_keeps_four_digits() -> None:
    assert iso(datetime(999, 1, 2, 3, 4, 5, tzinfo=UTC)) == "0999-01-02T03:04:05.000000Z"


def test_a_moment_in_another_zone_is_shifted_to_utc() -> None:
    moment = datetime(2024, 3, 1, 0, 30, 0, 7, tzinfo=timezone(timedelta(hours=5)))
    assert iso(moment) == "2024-02-29T19:30:00.000007Z"


def test_the_calendar_ends_are_kept_instead_of_overflowing() -> None:
    assert parse_iso("0001-01-01T00:00:00+05:00") == "0001-01-01T00:00:00.000000Z"
    assert parse_iso("9999-12-31T23:59:59-05:00") == "9999-12-31T23:59:59.999999Z"
    assert parse_iso("not a time") is None
