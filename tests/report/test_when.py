"""Clock times as the report writes them beside each event: zero-padded, in the log's own offset,
with the date once the session spans days (and for dates before year 1000 as strftime writes them)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from analyzer.events import Session, UserEvent
from analyzer.report._when import Times


def _times(*stamps: datetime) -> Times:
    events = [UserEvent(index=i, text=f"note {i}", ts=t) for i, t in enumerate(stamps)]
    return Times(Session(path="s.jsonl", format="claude-code", events=events))


def test_a_same_day_session_shows_clock_times_only() -> None:
    t0 = datetime(2026, 5, 1, 9, 5, 7, tzinfo=UTC)
    times = _times(t0, t0 + timedelta(minutes=1, seconds=2))
    assert times.stamp(0) == "09:05:07 UTC"
    assert times.clock(1) == "09:06"
    assert times.clock(1, seconds=True) == "09:06:09"


def test_a_session_over_midnight_shows_dates_in_its_own_offset() -> None:
    plus2 = timezone(timedelta(hours=2))
    t0 = datetime(2026, 5, 1, 23, 59, 1, tzinfo=plus2)
    times = _times(t0, t0 + timedelta(minutes=2))
    assert times.stamp(0) == "2026-05-01 23:59:01 UTC+02:00"
    assert times.clock(1) == "2026-05-02 00:01"


@pytest.mark.parametrize("year", [1, 999, 1000])
def test_early_years_read_as_strftime_writes_them(year: int) -> None:
    t0 = datetime(year, 1, 2, 3, 4, 5, tzinfo=UTC)
    times = _times(t0, t0 + timedelta(days=1))
    assert times.clock(0, seconds=True) == t0.strftime("%Y-%m-%d %H:%M:%S")
