from __future__ import annotations

from typing import Any

from analyzer.batch.chart import build_chart
from analyzer.batch.job import SessionResult


def result(started: str | None, severities: list[str], status: str = "ok") -> SessionResult:
    findings: list[dict[str, Any]] = [{"severity": s} for s in severities]
    return SessionResult(session="s", key=f"k{started}{severities}", path="s", started=started,
                         status=status, findings=findings)


def test_days_with_stacked_severities_and_empty_days_between() -> None:
    chart = build_chart([
        result("2026-03-01T10:00:00+00:00", ["high", "low"]),
        result("2026-03-01T23:00:00+00:00", ["medium"]),
        result("2026-03-04T08:00:00+00:00", []),
        result(None, ["high"], status="error"),  # failed sessions are not plotted
    ])
    assert chart is not None and chart.unit == "day"
    assert [b.label for b in chart.bars] == ["2026-03-01", "2026-03-02", "2026-03-03", "2026-03-04"]
    assert [b.sessions for b in chart.bars] == [2, 0, 0, 1]
    assert chart.max_findings == 3
    first = chart.bars[0]
    assert [s.severity for s in first.segments] == ["low", "medium", "high"]  # high on top
    assert first.segments[-1].y < first.segments[0].y
    assert abs(sum(s.height for s in first.segments) - (chart.baseline - 8)) < 0.05  # the tallest fills the plot
    assert first.title == "2026-03-01: 2 session(s), 3 finding(s) (high 1, medium 1, low 1)"
    assert (chart.first, chart.last) == ("2026-03-01", "2026-03-04")


def test_weeks_past_two_months_starting_on_mondays() -> None:
    chart = build_chart([result("2026-01-07T10:00:00+00:00", ["high"]),
                         result("2026-04-02T10:00:00+00:00", ["low"])])
    assert chart is not None and chart.unit == "week"
    assert chart.first == "2026-01-05" and chart.bars[0].label == "2026-01-05 to 2026-01-11"
    assert len(chart.bars) == 13


def test_years_of_history_widen_the_buckets() -> None:
    chart = build_chart([result("2017-10-27T10:00:00+00:00", ["high"]),
                         result("2026-04-02T10:00:00+00:00", ["low"])])
    assert chart is not None and chart.unit == "4 weeks" and len(chart.bars) <= 120


def test_no_dates_no_chart() -> None:
    assert build_chart([result(None, [])]) is None
