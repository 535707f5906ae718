"""Time in one format: ISO 8601 UTC with microseconds, which sorts as text."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``isoformat`` pads the year to four digits (``strftime("%Y")`` gives "999") and is
    several times quicker than ``strftime``; a moment already in UTC skips the shift."""
    utc = moment if moment.tzinfo is UTC else moment.astimezone(UTC)
    return utc.replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def parse_iso(value: str) -> str | None:
    """An ISO 8601 date or time (no zone: UTC) in the store's format; None if it is not one.

    A time zone shift past the calendar's ends stops at them instead of overflowing.
    """
    try:
        moment = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    try:
        return iso(moment)
    except OverflowError:
        return iso((datetime.min if moment.year == 1 else datetime.max).replace(tzinfo=UTC))


def now_iso() -> str:
    return iso(utc_now())


def later_by(value: str, seconds: float) -> str:
    """The store's time ``value`` moved ``seconds`` on; a time unreadable as one stays."""
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        return iso(moment + timedelta(seconds=seconds))
    except (ValueError, OverflowError):
        return value
