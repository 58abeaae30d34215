"""``findings.jsonl`` and ``summary.json``: the machine-readable outputs of a batch run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson

from analyzer import __version__
from analyzer.batch.results import BatchRun


def write_atomic(path: Path, data: bytes) -> None:
    """Write via a temporary file and rename: readers never see half a file, and a symlink planted
    at ``path`` is replaced, not written through."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def findings_lines(run: BatchRun) -> bytes:
    """One finding per line, as ``check --format json`` emits it plus ``session``; ordered by
    session path, anchor index, rule, so two runs over the same input give the same bytes."""
    return b"".join(orjson.dumps({"session": r.session, **f}) + b"\n" for r, f in run.findings())


def summary_doc(run: BatchRun) -> dict[str, Any]:
    twin_of = {t.key: first.session for first, twins in run.distinct() for t in twins}
    return {
        "version": __version__,
        "started_at": run.started_at.isoformat(timespec="seconds"),
        "seconds": round(run.seconds, 3),
        "since": run.since.isoformat() if run.since else None,
        "sessions": len(run.results),
        "analyzed": run.analyzed,
        "cached": run.cached,
        "failed": len(run.failed),
        "filtered_by_since": run.filtered,
        "distinct_sessions": len(run.distinct()),
        "findings": sum(run.by_severity().values()),
        "by_severity": run.by_severity(),
        "rules": {t.rule: {"severity": t.severity, "findings": t.findings, "sessions": t.sessions}
                  for t in run.per_rule()},
        "rules_run": run.rules,
        "jobs": run.jobs,
        "workers": run.workers,
        "engine_loads": run.engine_loads,
        "reports": {"format": run.reports, "written": sum(r.report is not None for r in run.results),
                    "note": run.reports_note},
        "session_status": [
            {"session": r.session, "status": r.status, "format": r.format, "events": r.events,
             "findings": len(r.findings), "report": r.report, "cached": r.cached, "error": r.error,
             **({"twin_of": twin_of[r.key]} if r.key in twin_of else {}),
             **({"report_error": r.report_error} if r.report_error else {}),
             **({"problems": r.problems} if r.problems else {})}
            for r in run.results
        ],
        "errors": [{"session": r.session, "error": r.error} for r in run.failed],
    }


def write_outputs(run: BatchRun, out: Path) -> None:
    write_atomic(out / "findings.jsonl", findings_lines(run))
    write_atomic(out / "summary.json", orjson.dumps(summary_doc(run), option=orjson.OPT_INDENT_2) + b"\n")
