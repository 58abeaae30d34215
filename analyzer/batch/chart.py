"""Findings over time for the index: stacked bars per day (per ISO week past ``DAILY_SPAN`` days),
as plain geometry the template draws as inline SVG."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import date, timedelta

from analyzer.batch.job import SessionResult
from analyzer.batch.results import SEVERITIES, when

DAILY_SPAN = 62
MAX_BUCKETS = 120
WIDTH, HEIGHT = 720, 160
LEFT, BOTTOM, TOP = 36, 22, 8


@dataclass
class Segment:
    severity: str
    y: float
    height: float


@dataclass
class Bar:
    label: str
    x: float
    width: float
    sessions: int
    findings: Counter[str]
    segments: list[Segment] = field(default_factory=list)

    @property
    def title(self) -> str:
        parts = ", ".join(f"{s} {self.findings[s]}" for s in SEVERITIES if self.findings[s])
        total = sum(self.findings.values())
        return f"{self.label}: {self.sessions} session(s), {total} finding(s)" + (f" ({parts})" if parts else "")


@dataclass
class Chart:
    unit: str
    """What one bar covers: ``day``, ``week`` or ``N weeks``."""
    bars: list[Bar]
    max_findings: int
    width: int = WIDTH
    height: int = HEIGHT
    left: int = LEFT
    baseline: float = HEIGHT - BOTTOM
    first: str = ""
    last: str = ""
    undated: int = 0
    """Sessions with no date at all (left out of the chart)."""


def _bucket(d: date, unit: str) -> date:
    return d - timedelta(days=d.weekday()) if unit == "week" else d


def build_chart(results: list[SessionResult]) -> Chart | None:
    """None when no session has a date."""
    dated = [(when(r), r) for r in results if r.status == "ok"]
    points = [(w.date(), r) for w, r in dated if w is not None]
    if not points:
        return None
    lo, hi = min(d for d, _ in points), max(d for d, _ in points)
    unit = "day" if (hi - lo).days <= DAILY_SPAN else "week"
    step = timedelta(days=7 if unit == "week" else 1)
    start, end = _bucket(lo, unit), _bucket(hi, unit)
    n = (end - start) // step + 1
    while n > MAX_BUCKETS:  # years of history: widen the buckets rather than draw hairlines
        step *= 2
        n = (end - start) // step + 1
    sessions: Counter[int] = Counter()
    findings: dict[int, Counter[str]] = {i: Counter() for i in range(n)}
    for d, r in points:
        i = (_bucket(d, unit) - start) // step
        sessions[i] += 1
        findings[i].update(f["severity"] for f in r.findings)
    top = max((sum(c.values()) for c in findings.values()), default=0)
    plot_w = WIDTH - LEFT - 4
    slot = plot_w / n
    scale = (HEIGHT - BOTTOM - TOP) / top if top else 0.0
    bars = []
    for i in range(n):
        day = start + i * step
        label = day.isoformat() if step.days == 1 else f"{day.isoformat()} to {(day + step - timedelta(days=1)).isoformat()}"
        bar = Bar(label, LEFT + i * slot + slot * 0.1, max(slot * 0.8, 1.0), sessions[i], findings[i])
        y = float(HEIGHT - BOTTOM)
        for sev in reversed(SEVERITIES):  # low at the bottom, high on top
            h = findings[i][sev] * scale
            if h:
                y -= h
                bar.segments.append(Segment(sev, round(y, 2), round(h, 2)))
        bar.x, bar.width = round(bar.x, 2), round(bar.width, 2)
        bars.append(bar)
    if step.days > 7:
        unit = f"{step.days // 7} weeks"
    return Chart(unit, bars, top, first=start.isoformat(), last=(start + (n - 1) * step).isoformat(),
                 undated=len(dated) - len(points))
