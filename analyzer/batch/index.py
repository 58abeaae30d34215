"""``index.html``: what went wrong, where, across a batch run, from ``reports/index.html.j2``
(autoescaped, self-contained, CSP by hash).

Sessions with findings come first, worst severity first, newest first among equals, each row
showing its findings' one-line messages linked to the finding inside its report; then sessions
that failed to load, then clean ones. A filter (text, rule, severity, agent, format, dates) and
sortable columns work offline. The same session read from two files (a seed fixture and its
JSONL twin: same session id, same findings) is one row, so nothing is counted twice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from analyzer import __version__
from analyzer.batch.chart import build_chart
from analyzer.batch.job import SessionResult
from analyzer.batch.results import SEVERITIES, BatchRun, short_error, when
from analyzer.report._env import environment
from analyzer.report._when import duration, zone
from analyzer.report.redact import Redactor
from analyzer.rules.api import severity_rank

TEMPLATE = "index.html.j2"


@dataclass
class FindingLine:
    """One finding as its session's row lists it."""

    rule: str
    severity: str
    message: str
    instance: str
    time: str
    """Clock time of its anchor event in the session's zone ("" when the log has no times)."""
    stamp: str
    """The full ISO time, for a tooltip."""
    href: str | None
    """The finding inside its report (``sessions/x.html#finding-2``)."""


@dataclass
class Twin:
    name: str
    format: str
    href: str | None


@dataclass
class Row:
    session: str
    name: str
    href: str | None
    date: str
    date_sort: str
    file_dated: bool
    """``date`` is the file's modification time: the log has no times."""
    day: str
    """``YYYY-MM-DD`` in the session's zone, for the date filter."""
    agent: str
    format: str
    duration: str
    events: int
    findings: list[FindingLine]
    counts: dict[str, int]
    worst: int
    """Rank of the most severe finding (3 high … 0 none)."""
    failed: bool
    error: str | None
    result: SessionResult
    twins: list[Twin] = field(default_factory=list)

    @property
    def text(self) -> str:
        """What the text filter searches, lower-cased."""
        words = [self.name, self.session, self.agent, self.format, self.error or "",
                 *(t.name for t in self.twins), *(f"{f.rule} {f.message} {f.instance}" for f in self.findings)]
        return " ".join(words).lower()


@dataclass
class RuleGroup:
    """Every finding of one rule across the run, each linked to its report."""

    rule: str
    severity: str
    sessions: int
    findings: list[tuple[Row, FindingLine]]


def report_order(findings: list[dict[str, Any]]) -> list[int]:
    """Positions of ``findings`` (as ``check --format json`` lists them) in the order the report
    numbers them (most severe first, then by anchor event and rule): ``finding-N`` ids."""
    return sorted(range(len(findings)),
                  key=lambda i: (-severity_rank(findings[i]["severity"]), findings[i]["anchor"]["index"],
                                 findings[i]["rule"]))


def _parse(iso: str | None) -> datetime | None:
    try:
        return datetime.fromisoformat(iso) if iso else None
    except ValueError:
        return None


def _lines(r: SessionResult, href: str | None, day: str) -> list[FindingLine]:
    out = []
    for number, i in enumerate(report_order(r.findings), 1):
        f = r.findings[i]
        t = _parse(r.finding_times[i] if i < len(r.finding_times) else None)
        clock = ""
        if t is not None:
            clock = t.strftime("%H:%M:%S" if t.strftime("%Y-%m-%d") == day else "%Y-%m-%d %H:%M:%S")
        out.append(FindingLine(rule=f["rule"], severity=f["severity"], message=str(f["message"]),
                               instance=str(f.get("instance") or ""), time=clock,
                               stamp=t.isoformat() if t else "", href=f"{href}#finding-{number}" if href else None))
    return out


def _row(r: SessionResult, name: str, redact: Redactor) -> Row:
    date = when(r)
    secs = None
    if r.started and r.ended:
        secs = (datetime.fromisoformat(r.ended) - datetime.fromisoformat(r.started)).total_seconds()
    href = quote(r.report) if r.report else None
    day = date.strftime("%Y-%m-%d") if date else ""
    shown = ""
    if date:
        shown = f"{date.strftime('%Y-%m-%d %H:%M')} {zone(date)}"
    findings = _lines(r, href, day)
    return Row(
        session=r.session, name=name, href=href, date=shown, file_dated=date is not None and not r.started,
        date_sort=date.astimezone(UTC).isoformat() if date else "", day=day,
        agent=r.agent or "", format=r.format or "", duration="" if secs is None else duration(secs),
        events=r.events, findings=findings,
        counts={s: sum(f.severity == s for f in findings) for s in SEVERITIES},
        worst=max((severity_rank(f.severity) for f in findings), default=0),
        failed=r.status != "ok", error=redact(short_error(r)) if r.error else None, result=r,
    )


def _rank(row: Row) -> tuple[int, int, bool]:
    """Findings first (worst first), then failures, then clean sessions; sessions dated by their
    log before those dated only by their file (a copy or a checkout makes that date today)."""
    return (0 if row.findings else 1 if row.failed else 2, -row.worst, not row.result.started)


def session_rows(run: BatchRun) -> list[Row]:
    """One row per session (twins folded into the first one read), in the order the index shows."""
    redact = Redactor(enabled=run.redact)
    rows: list[Row] = []
    for r, twins in run.distinct():
        row = _row(r, run.names.get(r.key, r.session), redact)
        row.twins = [Twin(name=run.names.get(t.key, t.session), format=t.format or "",
                          href=quote(t.report) if t.report else None) for t in twins]
        rows.append(row)
    rows.sort(key=lambda row: row.date_sort, reverse=True)  # newest first…
    rows.sort(key=_rank)  # …within each group
    return rows


def rule_groups(rows: list[Row]) -> list[RuleGroup]:
    """Findings grouped by rule, most severe rules first, then the most frequent."""
    groups: dict[str, RuleGroup] = {}
    for row in rows:
        for f in row.findings:
            g = groups.setdefault(f.rule, RuleGroup(f.rule, f.severity, 0, []))
            if severity_rank(f.severity) > severity_rank(g.severity):
                g.severity = f.severity
            g.findings.append((row, f))
    for g in groups.values():
        g.sessions = len({id(row) for row, _ in g.findings})
    return sorted(groups.values(), key=lambda g: (-severity_rank(g.severity), -len(g.findings), g.rule))


def render_index(run: BatchRun, roots: list[str]) -> str:
    rows = session_rows(run)
    by_severity = {s: sum(row.counts[s] for row in rows) for s in SEVERITIES}
    return environment().get_template(TEMPLATE).render(
        roots=roots,
        since=run.since.isoformat() if run.since else None,
        totals={"sessions": len(rows), "files": len(run.results), "with_findings": sum(bool(r.findings) for r in rows),
                "findings": sum(by_severity.values()), "failed": sum(r.failed for r in rows),
                "analyzed": run.analyzed, "cached": run.cached, "filtered": run.filtered},
        by_severity=by_severity,
        rules=rule_groups(rows),
        agents=sorted({r.agent for r in rows if r.agent}),
        formats=sorted({r.format for r in rows if r.format}),
        chart=build_chart([row.result for row in rows]),
        rows=rows,
        severity_rank=severity_rank,
        reports_note=run.reports_note,
        version=__version__,
        generated=run.started_at.strftime("%Y-%m-%d %H:%M UTC"),
    )
