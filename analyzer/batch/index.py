"""``index.html``: every session of a batch run in a sortable table, totals per rule and findings
over time, from ``reports/index.html.j2`` (autoescaped, self-contained, CSP by hash)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from analyzer import __version__
from analyzer.batch.chart import build_chart
from analyzer.batch.job import SessionResult
from analyzer.batch.results import SEVERITIES, BatchRun, short_error, when
from analyzer.report._env import environment
from analyzer.report._when import duration
from analyzer.report.redact import Redactor

TEMPLATE = "index.html.j2"


def _row(r: SessionResult, name: str, error_id: int | None, redact: Redactor) -> dict[str, Any]:
    date = when(r)
    secs = None
    if r.started and r.ended:
        secs = (datetime.fromisoformat(r.ended) - datetime.fromisoformat(r.started)).total_seconds()
    counts = {s: sum(f["severity"] == s for f in r.findings) for s in SEVERITIES}
    return {
        "session": r.session,
        "name": name,
        "date": (date.strftime("%Y-%m-%d %H:%M") + ("" if r.started else " (file)")) if date else "",
        "date_sort": date.astimezone(UTC).isoformat() if date else "",
        "agent": r.agent or "",
        "format": r.format or "",
        "duration": "" if secs is None else duration(secs),
        "duration_sort": "" if secs is None else f"{secs:.0f}",
        "events": r.events,
        "counts": counts,
        "href": quote(r.report) if r.report else None,
        "failed": r.status != "ok",
        "error": redact(short_error(r)) if r.error else None,
        "error_id": error_id,
    }


def render_index(run: BatchRun, roots: list[str]) -> str:
    redact = Redactor(enabled=run.redact)
    rows: list[dict[str, Any]] = []
    failures: list[dict[str, Any]] = []
    for r in run.results:
        row = _row(r, run.names.get(r.key, r.session), len(failures) + 1 if r.status != "ok" else None, redact)
        rows.append(row)
        if row["failed"]:
            failures.append(row)
    return environment().get_template(TEMPLATE).render(
        roots=roots,
        since=run.since.isoformat() if run.since else None,
        totals={"sessions": len(run.results), "findings": sum(len(r.findings) for r in run.results),
                "failed": len(run.failed), "analyzed": run.analyzed, "cached": run.cached,
                "filtered": run.filtered},
        by_severity=run.by_severity(),
        severity_rank={s: len(SEVERITIES) - i for i, s in enumerate(SEVERITIES)},
        rules=run.per_rule(),
        chart=build_chart(run.results),
        rows=rows,
        failures=failures,
        reports_note=run.reports_note,
        version=__version__,
        generated=run.started_at.strftime("%Y-%m-%d %H:%M UTC"),
    )
